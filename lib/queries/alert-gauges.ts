import 'server-only';
import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';
import { claimableAt } from '../db/sql/queue-state';

export interface AlertGauges {
  /** Seconds from now to the earliest approval deadline of a PENDING proposal; null when none waits. */
  nextProposalDeadlineSeconds: number | null;
  /** How long the oldest claimable settlement has been due, in seconds; 0 when nothing is due. */
  oldestDueSettlementSeconds: number;
}

/**
 * The two figures alerting needs beyond the counts: how close the next approval
 * deadline is and how long work has waited in the queue. Both read one row through an
 * index (the pending-proposal index and the due-order index), by the server's clock.
 */
export async function readAlertGauges(db: DbOrTx): Promise<AlertGauges> {
  const { rows } = await db.execute<{ deadline: number | null; oldest: number | null }>(sql`
    with clock as (select (extract(epoch from clock_timestamp()) * 1000)::bigint as ms)
    select (select extract(epoch from (min(p.wait_deadline) - clock_timestamp()))::float8
              from keel.recovery_proposal p where p.status = 'PENDING') as deadline,
           (select (clock.ms - a.next_visible_at_ms)::float8 / 1000 from settle.attempts a
             where ${claimableAt(sql`clock.ms`, 'a')}
             order by a.next_visible_at_ms, a.receipt_id limit 1) as oldest
    from clock`);
  const row = rows[0];
  return {
    nextProposalDeadlineSeconds: row?.deadline === null || row?.deadline === undefined ? null : Number(row.deadline),
    oldestDueSettlementSeconds: Math.max(0, Number(row?.oldest ?? 0)),
  };
}
