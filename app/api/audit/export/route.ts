import { auditFiltersSchema } from '@/lib/domain/audit-filters';
import { csvRow } from '@/lib/domain/csv';
import { streamAuditEvents, type AuditEventView } from '@/lib/queries/audit';
import { apiRoute } from '@/lib/server/api-route';
import { logger } from '@/lib/server/logger';
import { loggableError } from '@/lib/server/safe-error';
import { runtime } from '@/lib/server/runtime';

export const dynamic = 'force-dynamic';

const HEADER = ['id', 'at_utc', 'actor', 'role', 'action', 'target_kind', 'target_id', 'reason', 'outcome', 'code', 'digest', 'operation_id', 'request_id'];

const line = (e: AuditEventView) =>
  csvRow([e.id, e.at, e.actorLogin, e.actorRole, e.action, e.targetKind, e.targetId, e.reason, e.outcome, e.code, e.digest, e.operationId, e.requestId]);

/**
 * GET /api/audit/export?<the page's filters> : every matching row as CSV, newest
 * first, streamed batch by batch so memory stays flat however large the log.
 */
export const GET = apiRoute('read', auditFiltersSchema, async (actor, filters) => {
  const batches = streamAuditEvents(runtime().pool, filters);
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(csvRow(HEADER)));
    },
    async pull(controller) {
      try {
        const next = await batches.next();
        if (next.done) controller.close();
        else controller.enqueue(encoder.encode(next.value.map(line).join('')));
      } catch (error) {
        logger.error({ error: loggableError(error), actor: actor.login }, 'audit export failed');
        controller.error(error);
      }
    },
    async cancel() {
      await batches.return(undefined);
    },
  });
  const stamp = new Date().toISOString().slice(0, 19).replaceAll(':', '').replace('T', '-');
  return new Response(body, {
    headers: {
      'Content-Type': 'text/csv; charset=utf-8; header=present',
      'Content-Disposition': `attachment; filename="keel-audit-${stamp}Z.csv"`,
      'Cache-Control': 'no-store',
    },
  });
});
