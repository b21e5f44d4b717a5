import { auditFiltersSchema } from '@/lib/domain/audit-filters';
import { apiRoute } from '@/lib/server/api-route';
import { auditCsvStream, EXPORT_LIMITS } from '@/lib/server/audit-export';
import { runtime } from '@/lib/server/composition-root';
import { exportSlots } from '@/lib/server/composition-root';
import { currentTimeZone } from '@/lib/server/time-zone';

export const dynamic = 'force-dynamic';

/**
 * GET /api/audit/export?<the page's filters> : every matching row as CSV, newest
 * first, streamed batch by batch so memory stays flat however large the log. Exports
 * run on their own small pool in slots shared by every instance (EXPORT_LIMITS: per user,
 * and per role so that no role's readers can hold another's); beyond them the answer is
 * 429 EXPORT_BUSY with Retry-After. An export ends after EXPORT_LIMITS.maxDurationMs.
 */
export const GET = apiRoute('read', auditFiltersSchema, async (actor, filters) => {
  // Times in the reader's zone, as their page shows them; the column's name says which.
  const { zone } = await currentTimeZone(actor);
  const release = await exportSlots().tryAcquire(actor);
  if (!release) {
    return Response.json(
      {
        code: 'EXPORT_BUSY',
        message:
          `Too many exports are running (at most ${EXPORT_LIMITS.perUser} per user and ` +
          `${EXPORT_LIMITS.perRole} for the ${actor.role} role); try again shortly.`,
      },
      { status: 429, headers: { 'Retry-After': String(EXPORT_LIMITS.retryAfterSeconds), 'Cache-Control': 'no-store' } },
    );
  }
  const body = auditCsvStream(runtime().exportPool, filters, {
    reader: actor,
    zone,
    onEnd: () => void release(),
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
