import { createLoader, createSerializer, parseAsString, parseAsStringLiteral } from 'nuqs/server';
import { AUDIT_OUTCOMES } from '../domain/audit-filters';

/**
 * The audit log's URL state for the server page, the view and the export link;
 * auditListQuerySchema validates the same params on the page, the API and the export.
 */
export const auditUrlSearch = {
  actor: parseAsString,
  action: parseAsString,
  targetKind: parseAsString,
  targetId: parseAsString,
  outcome: parseAsStringLiteral(AUDIT_OUTCOMES),
  cursor: parseAsString,
};
export const loadAuditSearch = createLoader(auditUrlSearch);
export const serializeAuditSearch = createSerializer(auditUrlSearch);
