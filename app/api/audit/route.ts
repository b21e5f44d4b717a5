import { auditListQuerySchema } from '@/lib/domain/audit-filters';
import { listAuditEvents, parseAuditCursor } from '@/lib/queries/audit';
import { apiRoute } from '@/lib/server/api-route';
import { listDb } from '@/lib/server/read-source';

export const dynamic = 'force-dynamic';

/** GET /api/audit?actor=&action=&targetKind=&targetId=&outcome=&cursor= : one page, newest first. */
export const GET = apiRoute('read', auditListQuerySchema, async (actor, { cursor, ...filters }) => {
  const parsed = parseAuditCursor(cursor);
  if (parsed === 'invalid') {
    return Response.json(
      {
        code: 'INVALID_INPUT',
        message: 'Some query parameters are not valid.',
        fieldErrors: { cursor: ['This cursor was not made by Keel.'] },
      },
      { status: 400, headers: { 'Cache-Control': 'no-store' } },
    );
  }
  return listAuditEvents(await listDb(), actor, filters, parsed);
});
