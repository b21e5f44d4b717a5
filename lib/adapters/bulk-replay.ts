import 'server-only';
import { sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';
import type {
  BulkReplayCounts,
  BulkReplayItemView,
  BulkReplayJob,
  BulkReplaySampleItem,
  BulkReplayStore,
  DeadLetterFilter,
} from '../ports/bulk-replay';
import type { Role } from '../auth/roles';

/** Query rows typed by a port's interface (execute wants an index signature). */
type Row<T> = T & Record<string, unknown>;

interface JobRow {
  id: number;
  action: BulkReplayJob['action'];
  status: BulkReplayJob['status'];
  note: string;
  filter: BulkReplayJob['filter'];
  itemCount: number;
  processedCount: number;
  createdById: string;
  createdByLogin: string;
  startedById: string | null;
  startedByLogin: string | null;
  startedByRole: Role | null;
  createdAt: string | Date;
  startedAt: string | Date | null;
  finishedAt: string | Date | null;
  cancelledAt: string | Date | null;
}

const JOB_COLUMNS = sql.raw(`id, action, status, note, filter, item_count as "itemCount", processed_count as "processedCount",
  created_by_id as "createdById", created_by_login as "createdByLogin", started_by_id as "startedById",
  started_by_login as "startedByLogin", started_by_role as "startedByRole", created_at as "createdAt",
  started_at as "startedAt", finished_at as "finishedAt", cancelled_at as "cancelledAt"`);

const dateOrNull = (value: string | Date | null): Date | null => (value === null ? null : new Date(value));

function toJob(row: JobRow): BulkReplayJob {
  return {
    id: row.id,
    action: row.action,
    status: row.status,
    note: row.note,
    filter: row.filter,
    itemCount: row.itemCount,
    processedCount: row.processedCount,
    createdBy: { id: row.createdById, login: row.createdByLogin },
    startedBy:
      row.startedById && row.startedByLogin && row.startedByRole
        ? { id: row.startedById, login: row.startedByLogin, role: row.startedByRole }
        : null,
    createdAt: new Date(row.createdAt),
    startedAt: dateOrNull(row.startedAt),
    finishedAt: dateOrNull(row.finishedAt),
    cancelledAt: dateOrNull(row.cancelledAt),
  };
}

/** The filter as SQL over settle.dead_letters; ages are measured from the preview's server time. */
function filterCondition(filter: DeadLetterFilter, asOfMs: number): SQL {
  const conditions: SQL[] = [sql`true`];
  if (filter.reason !== undefined) conditions.push(sql`reason = ${filter.reason}`);
  if (filter.minAgeMs !== undefined) conditions.push(sql`recorded_at_ms <= ${asOfMs - filter.minAgeMs}::bigint`);
  if (filter.maxAgeMs !== undefined) conditions.push(sql`recorded_at_ms >= ${asOfMs - filter.maxAgeMs}::bigint`);
  if (filter.minAttempts !== undefined) conditions.push(sql`attempts >= ${filter.minAttempts}::int`);
  if (filter.maxAttempts !== undefined) conditions.push(sql`attempts <= ${filter.maxAttempts}::int`);
  // ^@, not LIKE: a prefix holding % or _ means those characters, and the text_pattern_ops index serves it.
  if (filter.receiptIdPrefix !== undefined) conditions.push(sql`receipt_id ^@ ${filter.receiptIdPrefix}`);
  if (filter.receiptIds !== undefined) conditions.push(sql`receipt_id = any(${sql.param(filter.receiptIds)}::text[])`);
  return sql.join(conditions, sql` and `);
}

export function postgresBulkReplayStore(db: DbOrTx): BulkReplayStore {
  async function oneJob(query: SQL): Promise<BulkReplayJob | null> {
    const result = await db.execute<Row<JobRow>>(query);
    return result.rows[0] ? toJob(result.rows[0]) : null;
  }

  return {
    async createPreview({ actor, action, note, filter, asOfMs, limit }) {
      const created = await db.execute<{ id: number }>(sql`
        insert into keel.bulk_replay (created_by_id, created_by_login, action, note, filter, status, item_count)
        values (${actor.id}, ${actor.login}, ${action}, ${note}, ${JSON.stringify({ ...filter, asOfMs })}::jsonb, 'PREVIEWED', 0)
        returning id`);
      const jobId = created.rows[0]!.id;
      // The frozen snapshot: one statement, so the items are one consistent view of the table.
      const frozen = await db.execute(sql`
        insert into keel.bulk_replay_item (job, receipt_id, recorded_at_ms)
        select ${jobId}::bigint, receipt_id, recorded_at_ms from settle.dead_letters
        where ${filterCondition(filter, asOfMs)}
        limit ${limit}::int`);
      const itemCount = frozen.rowCount ?? 0;
      await db.execute(sql`update keel.bulk_replay set item_count = ${itemCount}::int where id = ${jobId}::bigint`);
      return { jobId, itemCount };
    },

    async sample(jobId, limit) {
      const result = await db.execute<Row<BulkReplaySampleItem>>(sql`
        select i.receipt_id as "receiptId", d.reason, d.attempts, i.recorded_at_ms as "recordedAtMs"
        from keel.bulk_replay_item i join settle.dead_letters d using (receipt_id)
        where i.job = ${jobId}::bigint
        order by i.receipt_id limit ${limit}::int`);
      return result.rows;
    },

    job: (jobId) => oneJob(sql`select ${JOB_COLUMNS} from keel.bulk_replay where id = ${jobId}::bigint`),

    lockJob: (jobId) => oneJob(sql`select ${JOB_COLUMNS} from keel.bulk_replay where id = ${jobId}::bigint for update`),

    // SKIP LOCKED: a job another worker is running a batch of is passed over, so two
    // workers never take the same batch and never wait on each other.
    lockNextRunningJob: () =>
      oneJob(sql`
        select ${JOB_COLUMNS} from keel.bulk_replay where status = 'RUNNING'
        order by id limit 1 for update skip locked`),

    async markStarted(jobId, actor) {
      await db.execute(sql`
        update keel.bulk_replay
        set status = 'RUNNING', started_at = clock_timestamp(), started_by_id = ${actor.id},
            started_by_login = ${actor.login}, started_by_role = ${actor.role}
        where id = ${jobId}::bigint`);
    },

    async markCancelled(jobId) {
      await db.execute(sql`
        update keel.bulk_replay set status = 'CANCELLED', cancelled_at = clock_timestamp(), finished_at = clock_timestamp()
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
      const result = await db.execute<{ receiptId: string; recordedAtMs: number }>(sql`
        select receipt_id as "receiptId", recorded_at_ms as "recordedAtMs" from keel.bulk_replay_item
        where job = ${jobId}::bigint and result is null
        order by receipt_id limit ${limit}::int`);
      return result.rows;
    },

    async hasPendingItems(jobId) {
      const result = await db.execute<{ pending: boolean }>(sql`
        select exists (select 1 from keel.bulk_replay_item where job = ${jobId}::bigint and result is null) as pending`);
      return result.rows[0]?.pending === true;
    },

    async recordResults(jobId, results) {
      if (results.length === 0) return;
      const updated = await db.execute(sql`
        update keel.bulk_replay_item i set result = r.result, processed_at = clock_timestamp()
        from unnest(${sql.param(results.map((r) => r.receiptId))}::text[], ${sql.param(results.map((r) => r.result))}::text[])
          as r(receipt_id, result)
        where i.job = ${jobId}::bigint and i.receipt_id = r.receipt_id and i.result is null`);
      await db.execute(sql`
        update keel.bulk_replay set processed_count = processed_count + ${updated.rowCount ?? 0}::int where id = ${jobId}::bigint`);
    },

    async counts(jobId) {
      const counts: BulkReplayCounts = {
        pending: 0, replayed: 0, discarded: 0, already_replayed: 0, no_longer_dead_lettered: 0, changed_since_preview: 0, cancelled: 0,
      };
      const result = await db.execute<{ result: keyof BulkReplayCounts; count: number }>(sql`
        select coalesce(result, 'pending') as result, count(*)::int as count
        from keel.bulk_replay_item where job = ${jobId}::bigint group by 1`);
      for (const row of result.rows) counts[row.result] = row.count;
      return counts;
    },

    async items(jobId, { after, result, limit }) {
      const conditions: SQL[] = [sql`job = ${jobId}::bigint`];
      if (after !== undefined) conditions.push(sql`receipt_id > ${after}`);
      if (result === 'pending') conditions.push(sql`result is null`);
      else if (result !== undefined) conditions.push(sql`result = ${result}`);
      const rows = await db.execute<Row<BulkReplayItemView>>(sql`
        select receipt_id as "receiptId", recorded_at_ms as "recordedAtMs", result, processed_at as "processedAt"
        from keel.bulk_replay_item where ${sql.join(conditions, sql` and `)}
        order by receipt_id limit ${limit}::int`);
      return rows.rows.map((row) => ({ ...row, processedAt: dateOrNull(row.processedAt) }));
    },
  };
}
