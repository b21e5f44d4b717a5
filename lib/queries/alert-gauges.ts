import 'server-only';
import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';
import { claimableAt } from '../db/sql/queue-state';
import type { AlertGauges } from '../observability/metric-catalogue';

/**
 * One statement, each figure read through an index: the pending-proposal deadline index,
 * the due-order index, the pending-delivery index (pending deliveries are few), the
 * delivery status index, the bulk job status index and the checkpoint expiry index.
 */
export async function readAlertGauges(db: DbOrTx): Promise<AlertGauges> {
  const { rows } = await db.execute<{
    deadline: number | null;
    oldest: number | null;
    retrying: string | number;
    failed: string | number;
    stalled: string | number;
    lapsed: string | number;
  }>(sql`
    with clock as (select (extract(epoch from clock_timestamp()) * 1000)::bigint as ms)
    select (select extract(epoch from (min(p.wait_deadline) - clock_timestamp()))::float8
              from keel.recovery_proposal p where p.status = 'PENDING') as deadline,
           (select (clock.ms - a.next_visible_at_ms)::float8 / 1000 from settle.attempts a
             where ${claimableAt(sql`clock.ms`, 'a')}
             order by a.next_visible_at_ms, a.receipt_id limit 1) as oldest,
           (select count(*) from keel.webhook_delivery d join keel.webhook_endpoint e on e.name = d.endpoint
           and e.enabled
             where d.status = 'PENDING' and d.attempts > 0) as retrying,
           (select count(*) from keel.webhook_delivery d where d.status = 'FAILED') as failed,
           (select count(*) from keel.bulk_replay j
             where j.status = 'RUNNING' and (j.worker_lease_until is null
             or j.worker_lease_until < clock_timestamp())) as stalled,
           (select count(*) from keel.durable_checkpoint c where c.lease_expires_at_ms <= clock.ms) as lapsed
    from clock`);
  const row = rows[0];
  return {
    nextProposalDeadlineSeconds: row?.deadline === null || row?.deadline === undefined ? null : Number(row.deadline),
    oldestDueSettlementSeconds: Math.max(0, Number(row?.oldest ?? 0)),
    webhookDeliveriesRetrying: Number(row?.retrying ?? 0),
    webhookDeliveriesFailed: Number(row?.failed ?? 0),
    bulkJobsStalled: Number(row?.stalled ?? 0),
    orchestrationLeasesLapsed: Number(row?.lapsed ?? 0),
  };
}
