import { createLoader, parseAsIsoDateTime, parseAsString, parseAsStringLiteral, type inferParserType } from 'nuqs/server';
import { AUDIT_OUTCOMES, auditSearch, type AuditSearch } from '../domain/audit-search';

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
  from: parseAsIsoDateTime,
  to: parseAsIsoDateTime,
  cursor: parseAsString,
};
export type AuditUrlState = inferParserType<typeof auditUrlSearch>;
export const loadAuditSearch = createLoader(auditUrlSearch);

const iso = (at: Date | null) => (at && !Number.isNaN(at.getTime()) ? at.toISOString() : null);

/** The URL state as the read API's params (query key, API URL and export URL alike). */
export function auditSearchOf(state: AuditUrlState, withCursor = true): AuditSearch {
  return auditSearch({ ...state, from: iso(state.from), to: iso(state.to) }, withCursor);
}

/** Filters from the form (ISO text) as URL state. */
export function auditStateOf(search: AuditSearch): Omit<AuditUrlState, 'cursor'> {
  const at = (value: string | undefined) => (value ? new Date(value) : null);
  return {
    actor: search.actor ?? null,
    action: search.action ?? null,
    targetKind: search.targetKind ?? null,
    targetId: search.targetId ?? null,
    outcome: AUDIT_OUTCOMES.find((o) => o === search.outcome) ?? null,
    from: at(search.from),
    to: at(search.to),
  };
}
