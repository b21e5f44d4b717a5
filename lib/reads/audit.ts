import 'server-only';
import { z } from 'zod';
import { auditFiltersSchema } from '../domain/audit-filters';
import { decodedCursor } from '../domain/text';
import { listAuditEvents, parseAuditCursor } from '../queries/audit';
import { defineRead } from './define-read';

/** The audit log, newest first: the CSV export (app/api/audit/export) takes the same filters. */
export const auditList = defineRead({
  path: '/api/audit',
  permission: 'read',
  search: z.intersection(auditFiltersSchema, z.object({ cursor: decodedCursor(400, parseAuditCursor) })),
  source: 'list',
  read: (db, { cursor, ...filters }, { actor }) => listAuditEvents(db, actor, filters, cursor),
});
