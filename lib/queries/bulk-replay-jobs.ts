import 'server-only';
import { sql, type SQL } from 'drizzle-orm';
import type { Role } from '../domain/roles';
import type { DbOrTx } from '../db/client';
import type { BulkReplayCounts, BulkReplayItemOutcome, BulkReplayItemView, BulkReplayJob } from '../ports/bulk-replay';

/**
 * Bulk replay jobs and items read as `(db, ...)` functions: the read API and pages call
 * them directly, and the bulk replay store's reads are these same statements.
 */

/** Query rows typed by their interface (execute wants an index signature). */
type Row<T> = T & Record<string, unknown>;

export interface BulkReplayJobRow {
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
  workerInstance: string | null;
}

export const BULK_REPLAY_JOB_COLUMNS =
  sql.raw(`id, action, status, note, filter, item_count as "itemCount", processed_count as "processedCount",
  created_by_id as "createdById", created_by_login as "createdByLogin", started_by_id as "startedById",
  started_by_login as "startedByLogin", started_by_role as "startedByRole", created_at as "createdAt",
  started_at as "startedAt", finished_at as "finishedAt", cancelled_at as "cancelledAt",
  worker_instance as "workerInstance"`);

const dateOrNull = (value: string | Date | null): Date | null => (value === null ? null : new Date(value));

export function toBulkReplayJob(row: BulkReplayJobRow): BulkReplayJob {
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
    workerInstance: row.workerInstance,
  };
}

export async function readBulkReplayJob(db: DbOrTx, jobId: number): Promise<BulkReplayJob | null> {
  const result = await db.execute<Row<BulkReplayJobRow>>(
    sql`select ${BULK_REPLAY_JOB_COLUMNS} from keel.bulk_replay where id = ${jobId}::bigint`,
  );
  return result.rows[0] ? toBulkReplayJob(result.rows[0]) : null;
}

export async function countBulkReplayItems(db: DbOrTx, jobId: number): Promise<BulkReplayCounts> {
  const counts: BulkReplayCounts = {
    pending: 0,
    replayed: 0,
    discarded: 0,
    requeued: 0,
    already_replayed: 0,
    no_longer_dead_lettered: 0,
    no_longer_retry_scheduled: 0,
    changed_since_preview: 0,
    cancelled: 0,
  };
  const result = await db.execute<{ result: keyof BulkReplayCounts; count: number }>(sql`
    select coalesce(result, 'pending') as result, count(*)::int as count
    from keel.bulk_replay_item where job = ${jobId}::bigint group by 1`);
  for (const row of result.rows) counts[row.result] = row.count;
  return counts;
}

/** Items in receipt order after `after` (keyset), optionally of one result (`pending` = none yet). */
export async function listBulkReplayItems(
  db: DbOrTx,
  jobId: number,
  { after, result, limit }: { after?: string; result?: BulkReplayItemOutcome | 'pending'; limit: number },
): Promise<BulkReplayItemView[]> {
  const conditions: SQL[] = [sql`job = ${jobId}::bigint`];
  if (after !== undefined) conditions.push(sql`receipt_id > ${after}`);
  if (result === 'pending') conditions.push(sql`result is null`);
  else if (result !== undefined) conditions.push(sql`result = ${result}`);
  const rows = await db.execute<Row<BulkReplayItemView>>(sql`
    select receipt_id as "receiptId", recorded_at_ms as "recordedAtMs", result, processed_at as "processedAt"
    from keel.bulk_replay_item where ${sql.join(conditions, sql` and `)}
    order by receipt_id limit ${limit}::int`);
  return rows.rows.map((row) => ({ ...row, processedAt: dateOrNull(row.processedAt) }));
}
