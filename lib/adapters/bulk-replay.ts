import 'server-only';
import { eq, sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';
import { user } from '../db/schema/auth';
import { isRole } from '../domain/roles';
import type { BulkReplayJob, BulkReplaySampleItem, BulkReplayStore, BulkRequeueSampleItem } from '../ports/bulk-replay';
import { inQueueState } from '../db/sql/queue-state';
import { allOf, deadLetterFilterConditions } from '../db/sql/dead-letter-filter';
import {
  BULK_REPLAY_JOB_COLUMNS,
  countBulkReplayItems,
  listBulkReplayItems,
  readBulkReplayJob,
  toBulkReplayJob,
  type BulkReplayJobRow,
} from '../queries/bulk-replay-jobs';

/** Query rows typed by a port's interface (execute wants an index signature). */
type Row<T> = T & Record<string, unknown>;

export function postgresBulkReplayStore(db: DbOrTx): BulkReplayStore {
  async function oneJob(query: SQL): Promise<BulkReplayJob | null> {
    const result = await db.execute<Row<BulkReplayJobRow>>(query);
    return result.rows[0] ? toBulkReplayJob(result.rows[0]) : null;
  }

  return {
    async createPreview({ actor, action, note, filter, asOfMs, limit }) {
      const created = await db.execute<{ id: number }>(sql`
        insert into keel.bulk_replay (created_by_id, created_by_login, action, note, filter, status, item_count)
        values (${actor.id}, ${actor.login}, ${action}, ${note}, ${JSON.stringify({ ...filter, asOfMs })}::jsonb,
        'PREVIEWED', 0)
        returning id`);
      const jobId = created.rows[0]!.id;
      // The frozen snapshot: one statement, so the items are one consistent view of the table.
      const frozen = await db.execute(sql`
        insert into keel.bulk_replay_item (job, receipt_id, recorded_at_ms)
        select ${jobId}::bigint, receipt_id, recorded_at_ms from settle.dead_letters
        where ${allOf(deadLetterFilterConditions(filter, asOfMs))}
        limit ${limit}::int`);
      const itemCount = frozen.rowCount ?? 0;
      await db.execute(sql`update keel.bulk_replay set item_count = ${itemCount}::int where id = ${jobId}::bigint`);
      return { jobId, itemCount };
    },

    async createRequeuePreview({ actor, note, receiptIds, asOfMs }) {
      const created = await db.execute<{ id: number }>(sql`
        insert into keel.bulk_replay (created_by_id, created_by_login, action, note, filter, status, item_count)
        values (${actor.id}, ${actor.login}, 'REQUEUE', ${note}, ${JSON.stringify({ receiptIds, asOfMs })}::jsonb,
        'PREVIEWED', 0)
        returning id`);
      const jobId = created.rows[0]!.id;
      // Frozen with its row_version: the worker requeues an item only if the row is still that version.
      const frozen = await db.execute(sql`
        insert into keel.bulk_replay_item (job, receipt_id, recorded_at_ms, row_version)
        select ${jobId}::bigint, receipt_id, next_visible_at_ms, row_version from settle.attempts
        where receipt_id = any(${sql.param([...receiptIds])}::text[]) and work_kind = 'retry_scheduled'
          and ${inQueueState('retry_scheduled', asOfMs)}`);
      const itemCount = frozen.rowCount ?? 0;
      await db.execute(sql`update keel.bulk_replay set item_count = ${itemCount}::int where id = ${jobId}::bigint`);
      return { jobId, itemCount };
    },

    async requeueSample(jobId, limit) {
      const result = await db.execute<Row<BulkRequeueSampleItem>>(sql`
        select i.receipt_id as "receiptId", a.attempts, a.reason_code as "reasonCode",
        a.next_visible_at_ms as "nextVisibleAtMs"
        from keel.bulk_replay_item i join settle.attempts a using (receipt_id)
        where i.job = ${jobId}::bigint
        order by i.receipt_id limit ${limit}::int`);
      return result.rows;
    },

    async sample(jobId, limit) {
      const result = await db.execute<Row<BulkReplaySampleItem>>(sql`
        select i.receipt_id as "receiptId", d.reason, d.attempts, i.recorded_at_ms as "recordedAtMs"
        from keel.bulk_replay_item i join settle.dead_letters d using (receipt_id)
        where i.job = ${jobId}::bigint
        order by i.receipt_id limit ${limit}::int`);
      return result.rows;
    },

    job: (jobId) => readBulkReplayJob(db, jobId),

    lockJob: (jobId) =>
      oneJob(sql`select ${BULK_REPLAY_JOB_COLUMNS} from keel.bulk_replay where id = ${jobId}::bigint for update`),

    // SKIP LOCKED: a job another worker is running a batch of is passed over, so two
    // workers never take the same batch and never wait on each other. The lease keeps a
    // job with one instance between its batches; a lease that ran out is taken over.
    async lockNextRunningJob(worker) {
      const result = await db.execute<Row<BulkReplayJobRow & { previousInstance: string | null }>>(sql`
        with next as (
          select id as next_id, worker_instance as previous_instance from keel.bulk_replay
          where status = 'RUNNING'
            and (worker_instance is null or worker_instance = ${worker.instance}
                 or worker_lease_until is null or worker_lease_until < clock_timestamp())
          order by id limit 1 for update skip locked)
        update keel.bulk_replay set worker_instance = ${worker.instance},
          worker_lease_until = clock_timestamp() + make_interval(secs => ${worker.leaseMs / 1000}::float8)
        from next where id = next.next_id
        returning ${BULK_REPLAY_JOB_COLUMNS}, next.previous_instance as "previousInstance"`);
      const row = result.rows[0];
      if (!row) return null;
      const previous = row.previousInstance;
      return {
        ...toBulkReplayJob(row),
        previousInstance: previous !== null && previous !== worker.instance ? previous : null,
      };
    },

    // FOR SHARE: a disable or role change of the starter (an UPDATE of this row) waits
    // for the batch to commit, and a batch that locks after it sees the new row; so once
    // the change commits, no batch of the starter's jobs runs on their old authority.
    async lockStarterStanding(userId) {
      const [row] = await db
        .select({ role: user.role, banned: user.banned })
        .from(user)
        .where(eq(user.id, userId))
        .for('share');
      return row ? { role: isRole(row.role) ? row.role : null, disabled: row.banned === true } : null;
    },

    async renewLease(jobId, worker) {
      await db.execute(sql`
        update keel.bulk_replay set worker_lease_until = clock_timestamp()
        + make_interval(secs => ${worker.leaseMs / 1000}::float8)
        where id = ${jobId}::bigint and worker_instance = ${worker.instance}`);
    },

    async markStarted(jobId, actor) {
      await db.execute(sql`
        update keel.bulk_replay
        set status = 'RUNNING', started_at = clock_timestamp(), started_by_id = ${actor.id},
            started_by_login = ${actor.login}, started_by_role = ${actor.role}
        where id = ${jobId}::bigint`);
    },

    async markCancelled(jobId) {
      await db.execute(sql`
        update keel.bulk_replay set status = 'CANCELLED', cancelled_at = clock_timestamp(),
        finished_at = clock_timestamp()
        where id = ${jobId}::bigint`);
      const items = await db.execute(sql`
        update keel.bulk_replay_item set result = 'cancelled', processed_at = clock_timestamp()
        where job = ${jobId}::bigint and result is null`);
      return items.rowCount ?? 0;
    },

    async markCompleted(jobId) {
      await db.execute(sql`
        update keel.bulk_replay set status = 'COMPLETED', finished_at = clock_timestamp() where id = ${jobId}::bigint`);
    },

    async pendingItems(jobId, limit) {
      const result = await db.execute<{ receiptId: string; recordedAtMs: number; rowVersion: number | null }>(sql`
        select receipt_id as "receiptId", recorded_at_ms as "recordedAtMs", row_version as "rowVersion"
        from keel.bulk_replay_item
        where job = ${jobId}::bigint and result is null
        order by receipt_id limit ${limit}::int`);
      return result.rows;
    },

    async hasPendingItems(jobId) {
      const result = await db.execute<{ pending: boolean }>(sql`
        select exists (select 1 from keel.bulk_replay_item where job = ${jobId}::bigint
        and result is null) as pending`);
      return result.rows[0]?.pending === true;
    },

    async recordResults(jobId, results) {
      if (results.length === 0) return;
      const updated = await db.execute(sql`
        update keel.bulk_replay_item i set result = r.result, processed_at = clock_timestamp()
        from unnest(${sql.param(results.map((r) => r.receiptId))}::text[],
        ${sql.param(results.map((r) => r.result))}::text[])
          as r(receipt_id, result)
        where i.job = ${jobId}::bigint and i.receipt_id = r.receipt_id and i.result is null`);
      await db.execute(sql`
        update keel.bulk_replay set processed_count = processed_count + ${updated.rowCount ?? 0}::int
        where id = ${jobId}::bigint`);
    },

    counts: (jobId) => countBulkReplayItems(db, jobId),

    items: (jobId, page) => listBulkReplayItems(db, jobId, page),
  };
}
