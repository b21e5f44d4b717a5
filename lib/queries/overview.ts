import 'server-only';
import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';
import { runtimeServerTimeMs } from '../db/runtime-time';
import { staleExecution } from '../db/sql/stale-execution';
import { queueStateCase } from '../db/sql/queue-state';

export interface Overview {
  serverNow: Date;
  executionsByStatus: { status: string; count: number }[];
  staleExecutions: number;
  pendingProposals: number;
  queue: { state: string; count: number }[];
  deadLettersByReason: { reason: string; count: number }[];
}

/** The overview's counts, read with the server's clock. */
export async function readOverview(db: DbOrTx, staleThresholdMs: number): Promise<Overview> {
  const [now, byStatus, stale, pending, queue, dead] = await Promise.all([
    db.execute<{ now: Date }>(sql`select clock_timestamp() as now`),
    db.execute<{ status: string; count: number }>(
      sql`select status, count(*)::int as count from oxide_batch.ob_job_execution group by status order by status`,
    ),
    db.execute<{ count: number }>(sql`
      select count(*)::int as count from oxide_batch.ob_job_execution
      where ${staleExecution(staleThresholdMs)}`),
    db.execute<{ count: number }>(sql`select count(*)::int as count from keel.recovery_proposal where status = 'PENDING'`),
    db.execute<{ state: string; count: number }>(sql`
      select ${queueStateCase(runtimeServerTimeMs)} as state,
             count(*)::int as count
      from settle.attempts group by 1 order by 1`),
    db.execute<{ reason: string; count: number }>(
      sql`select reason, count(*)::int as count from settle.dead_letters group by reason order by count desc, reason`,
    ),
  ]);
  return {
    serverNow: new Date(now.rows[0]!.now),
    executionsByStatus: byStatus.rows,
    staleExecutions: stale.rows[0]?.count ?? 0,
    pendingProposals: pending.rows[0]?.count ?? 0,
    queue: queue.rows,
    deadLettersByReason: dead.rows,
  };
}
