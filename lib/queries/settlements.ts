import 'server-only';
import { sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';
import { COUNT_CAP, decodeCursor, encodeCursor, type CappedCount } from '../domain/cursor';
import { FAILURE_CODES } from '../domain/settlement-vocabulary';
import { postgresBulkReplayStore } from '../adapters/bulk-replay';
import type { BulkReplayItemOutcome, BulkReplayJob } from '../ports/bulk-replay';
import {
  ageToMs,
  type BulkReplayDetail,
  type BulkReplayJobView,
  type BulkReplayListPage,
  type DeadLetterFilters,
  type DeadLetterGroups,
  type DeadLetterPage,
  type DeadLetterRow,
  type QueueFilters,
  type QueuePage,
  type QueueRow,
  type QueueState,
  type ReceiptHistory,
} from './settlements-types';

export const SETTLEMENT_PAGE_SIZE = 50;
export const BULK_REPLAY_PAGE_SIZE = 20;
const HISTORY_LIMIT = 200;

/** Query rows typed by their interface (execute wants an index signature). */
type Row<T> = T & Record<string, unknown>;

/** The server's clock in epoch ms: states and ages are measured against it, once per read. */
export async function settlementNowMs(db: DbOrTx): Promise<number> {
  const result = await db.execute<{ nowMs: number }>(sql`select (extract(epoch from clock_timestamp()) * 1000)::bigint as "nowMs"`);
  return result.rows[0]!.nowMs;
}

const and = (parts: SQL[]) => (parts.length ? sql.join(parts, sql` and `) : sql`true`);

async function cappedCount(db: DbOrTx, from: SQL, where: SQL): Promise<CappedCount> {
  const result = await db.execute<{ n: number }>(sql`select count(*)::int as n from (select 1 from ${from} where ${where} limit ${COUNT_CAP + 1}) t`);
  const n = result.rows[0]?.n ?? 0;
  return { value: Math.min(n, COUNT_CAP), capped: n > COUNT_CAP };
}

/** Conditions every filter adds, on a table whose age is measured on `ageColumn`. */
function filterConditions(f: DeadLetterFilters, reasonColumn: SQL, ageColumn: SQL, nowMs: number): SQL[] {
  const parts: SQL[] = [];
  if (f.reason) parts.push(sql`${reasonColumn} = ${f.reason}`);
  // ^@ (not starts_with or LIKE): it uses the text_pattern_ops index, and % or _ mean themselves.
  if (f.q) parts.push(sql`receipt_id ^@ ${f.q}`);
  if (f.minAttempts !== undefined) parts.push(sql`attempts >= ${f.minAttempts}::int`);
  if (f.maxAttempts !== undefined) parts.push(sql`attempts <= ${f.maxAttempts}::int`);
  const [minAge, maxAge] = [ageToMs(f.minAge), ageToMs(f.maxAge)];
  if (minAge !== undefined) parts.push(sql`${ageColumn} <= ${nowMs - minAge}::bigint`);
  if (maxAge !== undefined) parts.push(sql`${ageColumn} >= ${nowMs - maxAge}::bigint`);
  return parts;
}

const unleased = (nowMs: number) => sql`(lease_owner is null or lease_until_ms <= ${nowMs}::bigint)`;
function stateCondition(state: QueueState, nowMs: number): SQL {
  if (state === 'leased') return sql`lease_owner is not null and lease_until_ms > ${nowMs}::bigint`;
  if (state === 'due') return sql`next_visible_at_ms <= ${nowMs}::bigint and ${unleased(nowMs)}`;
  return sql`next_visible_at_ms > ${nowMs}::bigint and ${unleased(nowMs)}`;
}

const QUEUE_COLUMNS = sql.raw(`receipt_id as "receiptId", work_kind as "workKind", attempts, next_visible_at_ms as "nextVisibleAtMs",
  row_version as "rowVersion", lease_owner as "leaseOwner", lease_until_ms as "leaseUntilMs", reason_code as "reasonCode",
  finalized_at as "finalizedAt"`);

const queueState = (row: Omit<QueueRow, 'state'>, nowMs: number): QueueState =>
  row.leaseOwner !== null && row.leaseUntilMs !== null && row.leaseUntilMs > nowMs ? 'leased' : row.nextVisibleAtMs > nowMs ? 'retry_scheduled' : 'due';

/** A cursor as `[number, string]`, or null for the first page (a bad cursor starts over). */
function keyset(cursor: string | undefined): [number, string] | null {
  const values = decodeCursor(cursor, 2);
  return values && typeof values[0] === 'number' && typeof values[1] === 'string' ? [values[0], values[1]] : null;
}

/**
 * The settlement queue in due order `(next_visible_at_ms, receipt_id)`, keyset-paged,
 * one state at a time (or all), with each state's capped count under the same filters.
 */
export async function listSettlementQueue(db: DbOrTx, filters: QueueFilters, options: { nowMs?: number; pageSize?: number } = {}): Promise<QueuePage> {
  const nowMs = options.nowMs ?? (await settlementNowMs(db));
  const pageSize = options.pageSize ?? SETTLEMENT_PAGE_SIZE;
  const state = filters.state ?? 'due';
  const base = filterConditions(filters, sql`reason_code`, sql`next_visible_at_ms`, nowMs);
  const where = and(state === 'all' ? base : [...base, stateCondition(state, nowMs)]);
  const after = keyset(filters.cursor);
  const afterCondition = after ? sql`and (next_visible_at_ms, receipt_id) > (${after[0]}::bigint, ${after[1]})` : sql``;
  const attempts = sql`settle.attempts`;
  const [page, due, leased, retryScheduled, deadLettered] = await Promise.all([
    db.execute<Row<Omit<QueueRow, 'state'>>>(sql`
      select ${QUEUE_COLUMNS} from settle.attempts where ${where} ${afterCondition}
      order by next_visible_at_ms, receipt_id limit ${pageSize + 1}`),
    cappedCount(db, attempts, and([...base, stateCondition('due', nowMs)])),
    cappedCount(db, attempts, and([...base, stateCondition('leased', nowMs)])),
    cappedCount(db, attempts, and([...base, stateCondition('retry_scheduled', nowMs)])),
    cappedCount(db, sql`settle.dead_letters`, and(filterConditions(filters, sql`reason`, sql`recorded_at_ms`, nowMs))),
  ]);
  const rows = page.rows.slice(0, pageSize).map((r) => ({ ...r, state: queueState(r, nowMs) }));
  const last = rows.at(-1);
  const stateCounts = { due, leased, retry_scheduled: retryScheduled, dead_lettered: deadLettered };
  const count = state === 'all' ? await cappedCount(db, attempts, where) : stateCounts[state];
  return {
    rows,
    nextCursor: page.rows.length > pageSize && last ? encodeCursor([last.nextVisibleAtMs, last.receiptId]) : null,
    count,
    stateCounts,
    serverNowMs: nowMs,
  };
}

const DEAD_LETTER_COLUMNS = sql.raw(`receipt_id as "receiptId", reason, attempts, recorded_at_ms as "recordedAtMs", finalized_at as "finalizedAt"`);

/**
 * Dead letters, most recently recorded first, keyset-paged on `(recorded_at_ms,
 * receipt_id)`. The conditions are the bulk replay preview's, so the count shown is
 * the count a preview of the same filter freezes (while nothing arrives in between).
 */
export async function listDeadLetterPage(db: DbOrTx, filters: DeadLetterFilters, options: { nowMs?: number; pageSize?: number } = {}): Promise<DeadLetterPage> {
  const nowMs = options.nowMs ?? (await settlementNowMs(db));
  const pageSize = options.pageSize ?? SETTLEMENT_PAGE_SIZE;
  const where = and(filterConditions(filters, sql`reason`, sql`recorded_at_ms`, nowMs));
  const before = keyset(filters.cursor);
  const beforeCondition = before ? sql`and (recorded_at_ms, receipt_id) < (${before[0]}::bigint, ${before[1]})` : sql``;
  const [page, count] = await Promise.all([
    db.execute<Row<DeadLetterRow>>(sql`
      select ${DEAD_LETTER_COLUMNS} from settle.dead_letters where ${where} ${beforeCondition}
      order by recorded_at_ms desc, receipt_id desc limit ${pageSize + 1}`),
    cappedCount(db, sql`settle.dead_letters`, where),
  ]);
  const rows = page.rows.slice(0, pageSize);
  const last = rows.at(-1);
  return {
    rows,
    nextCursor: page.rows.length > pageSize && last ? encodeCursor([last.recordedAtMs, last.receiptId]) : null,
    count,
    serverNowMs: nowMs,
  };
}

/**
 * Dead letters by reason code under the other filters: one capped count per code of the
 * closed vocabulary, each an index range on `(reason, recorded_at_ms, receipt_id)`, so
 * the cost stays bounded however many dead letters there are.
 */
export async function deadLetterGroups(db: DbOrTx, filters: DeadLetterFilters, options: { nowMs?: number } = {}): Promise<DeadLetterGroups> {
  const nowMs = options.nowMs ?? (await settlementNowMs(db));
  const others = filterConditions({ ...filters, reason: undefined }, sql`d.reason`, sql`d.recorded_at_ms`, nowMs);
  const result = await db.execute<{ reason: string; n: number }>(sql`
    select code as reason,
           (select count(*)::int from (select 1 from settle.dead_letters d where d.reason = code and ${and(others)} limit ${COUNT_CAP + 1}) t) as n
    from unnest(${sql.param([...FAILURE_CODES])}::text[]) as code`);
  const groups = result.rows
    .filter((r) => r.n > 0)
    .map((r) => ({ reason: r.reason, count: { value: Math.min(r.n, COUNT_CAP), capped: r.n > COUNT_CAP } }))
    .sort((a, b) => b.count.value - a.count.value || a.reason.localeCompare(b.reason));
  return { groups, serverNowMs: nowMs };
}

/** Everything Keel knows of one receipt: where it is, its events, replays and audit trail. Null if nothing. */
export async function readReceiptHistory(db: DbOrTx, receiptId: string): Promise<ReceiptHistory | null> {
  const [nowMs, queued, dead, events, replays, audit] = await Promise.all([
    settlementNowMs(db),
    db.execute<Row<Omit<QueueRow, 'state'>>>(sql`select ${QUEUE_COLUMNS} from settle.attempts where receipt_id = ${receiptId}`),
    db.execute<Row<DeadLetterRow & { canonicalJson: string }>>(sql`
      select ${DEAD_LETTER_COLUMNS}, canonical_json as "canonicalJson" from settle.dead_letters where receipt_id = ${receiptId}`),
    db.execute<Row<ReceiptHistory['events'][number]>>(sql`
      select id, kind, attempt, reason_code as "reasonCode", at_ms as "atMs" from keel.settlement_event
      where receipt_id = ${receiptId} order by id desc limit ${HISTORY_LIMIT + 1}`),
    db.execute<Row<ReceiptHistory['replays'][number]>>(sql`
      select operation_id as "operationId", prior_attempts as "priorAttempts", prior_reason as "priorReason",
             actor_login as "actorLogin", note, bulk_job as "bulkJob", at from keel.settlement_replay
      where receipt_id = ${receiptId} order by at desc, id desc limit ${HISTORY_LIMIT + 1}`),
    db.execute<Row<ReceiptHistory['audit'][number]>>(sql`
      select id, at, actor_login as "actorLogin", actor_role as "actorRole", action, outcome, code, reason from keel.audit_event
      where target_kind = 'settlement' and target_id = ${receiptId} order by at desc, id desc limit ${HISTORY_LIMIT + 1}`),
  ]);
  const queuedRow = queued.rows[0];
  if (!queuedRow && !dead.rows[0] && events.rows.length === 0 && replays.rows.length === 0 && audit.rows.length === 0) return null;
  const iso = (at: unknown) => new Date(at as string).toISOString();
  return {
    receiptId,
    serverNowMs: nowMs,
    queued: queuedRow ? { ...queuedRow, state: queueState(queuedRow, nowMs) } : null,
    deadLetter: dead.rows[0] ?? null,
    events: events.rows.slice(0, HISTORY_LIMIT),
    replays: replays.rows.slice(0, HISTORY_LIMIT).map((r) => ({ ...r, at: iso(r.at) })),
    audit: audit.rows.slice(0, HISTORY_LIMIT).map((a) => ({ ...a, at: iso(a.at) })),
    truncated: [events, replays, audit].some((r) => r.rows.length > HISTORY_LIMIT),
  };
}

const isoOrNull = (at: Date | string | null) => (at === null ? null : new Date(at).toISOString());

/** A job as pages and the API show it: plain JSON, logins only. */
export function toBulkJobView(job: BulkReplayJob): BulkReplayJobView {
  return {
    id: job.id,
    action: job.action,
    status: job.status,
    note: job.note,
    filter: job.filter,
    itemCount: job.itemCount,
    processedCount: job.processedCount,
    createdBy: job.createdBy.login,
    startedBy: job.startedBy?.login ?? null,
    createdAt: job.createdAt.toISOString(),
    startedAt: isoOrNull(job.startedAt),
    finishedAt: isoOrNull(job.finishedAt),
  };
}

/** Bulk replay jobs, newest first, keyset-paged on id (the primary key, or the status index). */
export async function listBulkReplays(db: DbOrTx, filters: { status?: BulkReplayJobView['status']; cursor?: string }): Promise<BulkReplayListPage> {
  const before = decodeCursor(filters.cursor, 1);
  const parts: SQL[] = [];
  if (filters.status) parts.push(sql`status = ${filters.status}`);
  // A preview cancelled before it ever started replayed nothing: it leaves the default list (its page, its audit
  // events and the CANCELLED filter still show it), so abandoned previews do not pile up as jobs.
  else parts.push(sql`not (status = 'CANCELLED' and started_at is null)`);
  if (before && typeof before[0] === 'number') parts.push(sql`id < ${before[0]}::bigint`);
  const [nowMs, page] = await Promise.all([
    settlementNowMs(db),
    db.execute<Row<BulkReplayJobView & { createdAt: string | Date; startedAt: string | Date | null; finishedAt: string | Date | null }>>(sql`
      select id, action, status, note, filter, item_count as "itemCount", processed_count as "processedCount",
             created_by_login as "createdBy", started_by_login as "startedBy", created_at as "createdAt",
             started_at as "startedAt", finished_at as "finishedAt"
      from keel.bulk_replay where ${and(parts)} order by id desc limit ${BULK_REPLAY_PAGE_SIZE + 1}`),
  ]);
  const jobs = page.rows.slice(0, BULK_REPLAY_PAGE_SIZE).map((j) => ({
    ...j,
    createdAt: new Date(j.createdAt).toISOString(),
    startedAt: isoOrNull(j.startedAt),
    finishedAt: isoOrNull(j.finishedAt),
  }));
  const last = jobs.at(-1);
  return { jobs, nextCursor: page.rows.length > BULK_REPLAY_PAGE_SIZE && last ? encodeCursor([last.id]) : null, serverNowMs: nowMs };
}

export const BULK_ITEMS_PAGE_SIZE = 100;

/** A job's progress and one keyset page of its items (receipt order), optionally of one result. */
export async function readBulkReplayDetail(
  db: DbOrTx,
  jobId: number,
  page: { result?: BulkReplayItemOutcome | 'pending'; after?: string } = {},
): Promise<BulkReplayDetail | null> {
  const store = postgresBulkReplayStore(db);
  const job = await store.job(jobId);
  if (!job) return null;
  const [counts, items, nowMs] = await Promise.all([
    store.counts(jobId),
    store.items(jobId, { after: page.after, result: page.result, limit: BULK_ITEMS_PAGE_SIZE + 1 }),
    settlementNowMs(db),
  ]);
  const shown = items.slice(0, BULK_ITEMS_PAGE_SIZE);
  return {
    job: toBulkJobView(job),
    counts,
    items: shown.map((i) => ({ ...i, processedAt: isoOrNull(i.processedAt) })),
    nextAfter: items.length > BULK_ITEMS_PAGE_SIZE ? shown.at(-1)!.receiptId : null,
    serverNowMs: nowMs,
  };
}
