import 'server-only';
import { sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';
import { COUNT_CAP, decodeCursor, encodeCursor } from '../domain/cursor';
import { FAILURE_CODES } from '../domain/settlement-vocabulary';
import type { BulkReplayItemOutcome, BulkReplayJob } from '../ports/bulk-replay';
import {
  allOf,
  deadLetterFilterConditions,
  INT4_MAX,
  type DeadLetterFilterColumns,
} from '../db/sql/dead-letter-filter';
import { toDeadLetterFilter, type DeadLetterFilter } from '../domain/dead-letter-filter';
import { readDeadLetterRecord } from '../domain/dead-letter-record';
import { QUEUE_STATES, queueStateAt, type QueueState } from '../domain/queue-state';
import { cappedCountMemory, filterKey } from './capped-count-memory';
import { countsUpToCap, countUpToCap, SAMPLED_AS_IS_FROM, sampledCount, type ListCount } from './count';
import { readLastSample, sampledFigure, type LastSample } from './last-sample';
import { METRICS } from '../observability/metric-catalogue';
import { countBulkReplayItems, listBulkReplayItems, readBulkReplayJob } from './bulk-replay-jobs';
import { clockSideAt, inQueueState } from '../db/sql/queue-state';
import { leasedCandidates, leasedReceipts } from '../db/sql/lease-grants';
import type {
  BulkReplayDetail,
  BulkReplayJobView,
  BulkReplayListPage,
  DeadLetterFilters,
  DeadLetterGroups,
  DeadLetterPage,
  DeadLetterRow,
  QueueFilters,
  QueuePage,
  QueueRow,
  ReceiptHistory,
} from './settlements-types';

export const SETTLEMENT_PAGE_SIZE = 50;
export const BULK_REPLAY_PAGE_SIZE = 20;
const HISTORY_LIMIT = 200;

/** Query rows typed by their interface (execute wants an index signature). */
type Row<T> = T & Record<string, unknown>;

/** The server's clock in epoch ms: states and ages are measured against it, once per read. */
export async function settlementNowMs(db: DbOrTx): Promise<number> {
  const result = await db.execute<{ nowMs: number }>(
    sql`select (extract(epoch from clock_timestamp()) * 1000)::bigint as "nowMs"`,
  );
  return result.rows[0]!.nowMs;
}

const and = allOf;

/** The queue view filters `settle.attempts` on its reason code, and measures age on the due time. */
const QUEUE_FILTER_COLUMNS: DeadLetterFilterColumns = {
  reason: sql`reason_code`,
  ageMs: sql`next_visible_at_ms`,
  receiptId: sql`receipt_id`,
  attempts: sql`attempts`,
};

const QUEUE_COLUMNS =
  sql.raw(`receipt_id as "receiptId", work_kind as "workKind", attempts, next_visible_at_ms as "nextVisibleAtMs",
  row_version as "rowVersion", lease_owner as "leaseOwner", lease_until_ms as "leaseUntilMs",
  reason_code as "reasonCode", finalized_at as "finalizedAt"`);

/** A queue or dead-letter cursor: the sort key of the last row shown, `[ms, receipt id]`. */
export type SettlementCursor = [ms: number, receiptId: string];

/** A cursor these lists gave out, or 'invalid' (refused on its field by the read's schema, lib/reads/settlements). */
export function parseSettlementCursor(raw: string | undefined): SettlementCursor | null | 'invalid' {
  if (!raw) return null;
  const values = decodeCursor(raw, 2);
  return values && typeof values[0] === 'number' && Number.isSafeInteger(values[0]) && typeof values[1] === 'string'
    ? [values[0], values[1]]
    : 'invalid';
}

/** A bulk replay list cursor (the last job id shown), or 'invalid'. */
export function parseBulkReplayCursor(raw: string | undefined): number | null | 'invalid' {
  if (!raw) return null;
  const values = decodeCursor(raw, 1);
  return values && typeof values[0] === 'number' && Number.isSafeInteger(values[0]) ? values[0] : 'invalid';
}

/** True when a filter narrows nothing: the sampler's figures then describe exactly the rows a view counts. */
const isUnfiltered = (filter: DeadLetterFilter) => Object.keys(filter).length === 0;

/**
 * The clock every state and age of one read is measured against and, for an unfiltered
 * view, the metric sampler's last figures: one statement either way.
 */
async function clockAndSample(
  db: DbOrTx,
  unfiltered: boolean,
  options: SettlementReadOptions,
): Promise<{ nowMs: number; sample: LastSample | null }> {
  if (options.sample !== undefined)
    return { nowMs: options.nowMs ?? options.sample?.nowMs ?? (await settlementNowMs(db)), sample: options.sample };
  if (!unfiltered) return { nowMs: options.nowMs ?? (await settlementNowMs(db)), sample: null };
  const sample = await readLastSample(db);
  return { nowMs: options.nowMs ?? sample.nowMs, sample };
}

/** Under a receipt prefix a list's counts are counted, with no planner estimate first (CountHint.alwaysCounted). */
const countedUnderPrefix = (filter: DeadLetterFilter): { alwaysCounted?: true } =>
  filter.receiptIdPrefix !== undefined ? { alwaysCounted: true } : {};

/**
 * A receipt prefix tested on each row, in a form no index serves (`substr`), where the rows
 * must come from another index: the planner guesses a prefix's matches from the column's
 * histogram, so with `^@` it takes the prefix index even where a narrower range exists.
 */
const prefixOnEachRow = (prefix: string, column: SQL = sql`receipt_id`): SQL =>
  sql`substr(${column}, 1, char_length(${prefix})) = ${prefix}`;

/**
 * The queue's filter conditions for reading the live lease grants' ranges. A grant's range
 * is a few rows of attempts_due_idx; under a receipt prefix the planner read the prefix's
 * whole range of the prefix index instead, for each lookup: 4.4 ms a lookup at ten million
 * rows, three of them per view of the queue under `q=rcpt_ab` (docs/performance.md).
 */
function leaseLookupConditions(filter: DeadLetterFilter, nowMs: number): SQL[] {
  if (filter.receiptIdPrefix === undefined) return deadLetterFilterConditions(filter, nowMs, QUEUE_FILTER_COLUMNS);
  return [
    ...deadLetterFilterConditions({ ...filter, receiptIdPrefix: undefined }, nowMs, QUEUE_FILTER_COLUMNS),
    prefixOnEachRow(filter.receiptIdPrefix),
  ];
}

/**
 * The keyset cursor's condition, or none where the filter's own lower bound on the due time
 * is past it. A page of future retries, or of rows younger than a maximum age, keeps its
 * cursor while the clock moves past it, and an index scan given both starts at the cursor,
 * not at the filter's bound: it walked every row between the two (3,510 buffers and 19.5 ms
 * for a retry page at ten million rows whose cursor was eleven minutes old). Past the bound,
 * every row the filter keeps follows the cursor anyway.
 */
function afterCursor(
  cursor: SettlementCursor | null | undefined,
  state: QueueState | 'all',
  filter: DeadLetterFilter,
  nowMs: number,
): SQL[] {
  if (!cursor) return [];
  const bounds = [
    state === 'retry_scheduled' ? nowMs + 1 : Number.NEGATIVE_INFINITY,
    filter.maxAgeMs !== undefined ? nowMs - filter.maxAgeMs : Number.NEGATIVE_INFINITY,
  ];
  if (cursor[0] < Math.max(...bounds)) return [];
  return [sql`(next_visible_at_ms, receipt_id) > (${cursor[0]}::bigint, ${cursor[1]})`];
}

/** Up to this many rows under a receipt prefix (on the page's side of the clock) are sorted by due time. */
export const PREFIX_SORT_CAP = 2_000;

/**
 * A due or retry page's keys under a receipt prefix. Each way of reading them costs what
 * grows with the table under one kind of prefix:
 * - the prefix index holds the matches together, but in receipt order: the page must take
 *   them all, then sort them by due time;
 * - the due-order index holds them in order, but among all the others: the page walks
 *   about page size x (rows / matches) entries.
 * So at most PREFIX_SORT_CAP + 1 matches are read from the prefix index (its entries alone);
 * when they are all, they are sorted, and when there are more, the due order is walked
 * instead with the prefix tested on each entry (`substr`, which no index serves, so the
 * planner cannot take the prefix index back). Either way the leased rows are dropped by
 * key against the live lease grants' rows under the same filter, with no visit of a row
 * (`leasedReceipts`): a short prefix reads a bounded number of index entries at any size
 * of the queue, a long one only its few matches (docs/performance.md). The planner cannot
 * make this choice itself: it estimates a prefix's matches from the column's histogram, at
 * a ten-millionth of the rows, where a two-character prefix holds a 256th of them.
 */
function unleasedPrefixKeys(prefix: string, others: SQL[], nowMs: number, limit: number): SQL {
  const rest = and(others);
  return sql`with matches as materialized (
      select receipt_id, next_visible_at_ms from settle.attempts
      where receipt_id ^@ ${prefix} and ${rest} limit ${PREFIX_SORT_CAP + 1}
    ),
    few as (select count(*) <= ${PREFIX_SORT_CAP} as yes from matches),
    leased as materialized (
      select receipt_id from ${leasedReceipts(nowMs, and([prefixOnEachRow(prefix), ...others]))} x
    )
    (select m.receipt_id as key from matches m
     where (select yes from few) and m.receipt_id not in (select receipt_id from leased)
     order by m.next_visible_at_ms, m.receipt_id limit ${limit})
    union all
    (select k.receipt_id as key from settle.attempts k
     where not (select yes from few) and ${prefixOnEachRow(prefix, sql`k.receipt_id`)} and ${rest}
       and k.receipt_id not in (select receipt_id from leased)
     order by k.next_visible_at_ms, k.receipt_id limit ${limit})`;
}

/**
 * A page's keys under a minimum number of attempts, in due order. The due-order index holds
 * them among every other row, so walking it reads about page size x (rows / matches) rows
 * to test each one's attempts, and the oldest rows of a grown queue are mostly first tries:
 * 5,579 rows passed over at 10M under `minAttempts=3 minAge=30m`. `attempts_attempts_due_idx`
 * holds each count's rows in due order. So the page takes up to `limit` keys from each count
 * present (found by one descent each, a skip over that index) and merges them: at most
 * `limit` entries per count, however many rows the queue holds. Counts stay few: past its
 * policy's last attempt a settlement is dead-lettered.
 */
function keysByAttempts(minAttempts: number, where: SQL, limit: number): SQL {
  return sql`with recursive counts(n) as (
      (select attempts from settle.attempts where attempts >= ${minAttempts}::int order by attempts limit 1)
      union all
      select (select a.attempts from settle.attempts a where a.attempts > c.n order by a.attempts limit 1)
      from counts c where c.n is not null
    )
    select k.key from counts c cross join lateral (
      select receipt_id as key, next_visible_at_ms as due from settle.attempts
      where attempts = c.n and ${where} order by next_visible_at_ms, receipt_id limit ${limit}
    ) k
    order by k.due, k.key limit ${limit}`;
}

export interface SettlementReadOptions {
  nowMs?: number;
  /** The sampler's last sample, when the caller has read it already (a page rendering two views). */
  sample?: LastSample | null;
  pageSize?: number;
}

/**
 * The settlement queue in due order `(next_visible_at_ms, receipt_id)`, keyset-paged,
 * one state at a time (or all), with each state's count under the same filters
 * (lib/queries/count.ts: unfiltered, a state above the cap takes the sampler's figure).
 * The leased rows, page and count alike, are read from the live lease grants' ranges
 * of the due index (lib/db/sql/lease-grants.ts): exact, and never a scan of the table.
 */
export async function listSettlementQueue(
  db: DbOrTx,
  filters: QueueFilters & { cursor?: SettlementCursor | null },
  options: SettlementReadOptions = {},
): Promise<QueuePage> {
  const filter = toDeadLetterFilter(filters);
  const { nowMs, sample } = await clockAndSample(db, isUnfiltered(filter), options);
  const pageSize = options.pageSize ?? SETTLEMENT_PAGE_SIZE;
  const state = filters.state ?? 'due';
  const base = deadLetterFilterConditions(filter, nowMs, QUEUE_FILTER_COLUMNS);
  // A minimum age leaves no retry: a retry is due ahead of the clock, so its age is below
  // zero. The planner cannot see that the two bounds on the due time exclude each other:
  // it would walk an index led by attempts to find nothing (115 ms at 10M rows).
  const noRetries = filter.minAgeMs !== undefined;
  const none = (s: QueueState) => s === 'retry_scheduled' && noRetries;
  const inState = (s: QueueState) => (none(s) ? sql`false` : inQueueState(s, nowMs));
  const where = and(state === 'all' ? base : [...base, inState(state)]);
  const afterConditions = afterCursor(filters.cursor, state, filter, nowMs);
  const leaseBase = leaseLookupConditions(filter, nowMs);
  const attempts = sql`settle.attempts`;
  const sampled = (state: QueueState) => ({ sampled: sampledFigure(sample, METRICS.queueDepth, state) });
  const prefixed = countedUnderPrefix(filter);
  // Due and retry rows are counted from the due-order indexes alone: the rows at that side
  // of the clock, less the leased ones among them (from their lease grants).
  const unleased = (side: SQL) => ({
    superset: and([...base, side]),
    less: leasedReceipts(nowMs, and([...leaseBase, side])),
  });
  const stateParts = {
    due: {
      from: attempts,
      where: and([...base, inQueueState('due', nowMs)]),
      hint: {
        ...sampled('due'),
        ...prefixed,
        countedAs: unleased(clockSideAt('due', nowMs)),
        rememberAs: filterKey('queue.due', filter),
      },
    },
    // Exact from the live lease grants' ranges (lib/db/sql/lease-grants.ts), never the sampler's figure.
    leased: {
      from: sql`${leasedReceipts(nowMs, and(leaseBase))} leased`,
      where: sql`true`,
      hint: { alwaysCounted: true as const, rememberAs: filterKey('queue.leased', filter) },
    },
    retry_scheduled: none('retry_scheduled')
      ? { from: attempts, where: sql`false`, hint: { alwaysCounted: true as const } }
      : {
          from: attempts,
          where: and([...base, inQueueState('retry_scheduled', nowMs)]),
          hint: {
            ...sampled('retry_scheduled'),
            ...prefixed,
            countedAs: unleased(clockSideAt('retry_scheduled', nowMs)),
            rememberAs: filterKey('queue.retry_scheduled', filter),
          },
        },
    dead_lettered: {
      from: sql`settle.dead_letters`,
      where: and(deadLetterFilterConditions(filter, nowMs)),
      hint: {
        sampled: sampledFigure(sample, METRICS.deadLettersTotal),
        ...prefixed,
        rememberAs: filterKey('dead-letters', filter),
      },
    },
  };
  const queued = QUEUE_STATES.map((s) => sampled(s).sampled);
  const allHint = {
    sampled: queued.every((n) => n !== null) ? queued.reduce<number>((a, n) => a + (n ?? 0), 0) : null,
    ...prefixed,
    rememberAs: filterKey('queue.all', filter),
  };
  // The page's keys first, from the covering due-order indexes alone (0018), then its rows:
  // a filter the order's index does not lead with is checked on index entries, not heap rows.
  // Leased keys come from the live grants' ranges of the due index instead of a scan.
  const pageKeys =
    state === 'leased'
      ? sql`select distinct next_visible_at_ms as key_due, receipt_id as key
            from (${leasedCandidates(nowMs, and([...leaseBase, ...afterConditions]), pageSize + 1)}) c
          order by key_due, key limit ${pageSize + 1}`
      : filter.receiptIdPrefix !== undefined && state !== 'all'
        ? unleasedPrefixKeys(
            filter.receiptIdPrefix,
            [
              ...deadLetterFilterConditions({ ...filter, receiptIdPrefix: undefined }, nowMs, QUEUE_FILTER_COLUMNS),
              none(state) ? sql`false` : clockSideAt(state, nowMs),
              ...afterConditions,
            ],
            nowMs,
            pageSize + 1,
          )
        : filter.minAttempts !== undefined && filter.minAttempts <= INT4_MAX
          ? keysByAttempts(filter.minAttempts, and([where, ...afterConditions]), pageSize + 1)
          : sql`select receipt_id as key from settle.attempts where ${and([where, ...afterConditions])}
            order by next_visible_at_ms, receipt_id limit ${pageSize + 1}`;
  const [page, counts] = await Promise.all([
    db.execute<Row<Omit<QueueRow, 'state'>>>(sql`
      select ${QUEUE_COLUMNS} from settle.attempts
      join (${pageKeys}) page on page.key = receipt_id
      order by next_visible_at_ms, receipt_id`),
    // The "all" tab's count only when it is the one shown.
    state === 'all'
      ? countsUpToCap(db, { ...stateParts, all: { from: attempts, where, hint: allHint } })
      : countsUpToCap(db, stateParts),
  ]);
  const rows = page.rows.slice(0, pageSize).map((r) => ({ ...r, state: queueStateAt(r, nowMs) }));
  const last = rows.at(-1);
  const { due, leased, retry_scheduled, dead_lettered } = counts;
  const count = state === 'all' ? (counts as typeof counts & { all: ListCount }).all : counts[state];
  return {
    rows,
    nextCursor: page.rows.length > pageSize && last ? encodeCursor([last.nextVisibleAtMs, last.receiptId]) : null,
    count,
    stateCounts: { due, leased, retry_scheduled, dead_lettered },
    serverNowMs: nowMs,
  };
}

const DEAD_LETTER_COLUMNS = sql.raw(
  `receipt_id as "receiptId", reason, attempts, recorded_at_ms as "recordedAtMs", finalized_at as "finalizedAt",
  canonical_json as "canonicalJson"`,
);

type StoredDeadLetter = Omit<DeadLetterRow, 'detailSha256Hex'> & { canonicalJson: string };

/** A dead letter with its stored JSON read for people: the failure detail's digest as hex, never a byte array. */
function readStoredDeadLetter(row: StoredDeadLetter) {
  const record = readDeadLetterRecord(row.canonicalJson, row);
  return { ...row, detailSha256Hex: record.ok ? record.detailSha256Hex : null, record };
}

/** A list row: the columns and the detail digest, without the JSON. */
function deadLetterListRow(row: StoredDeadLetter): DeadLetterRow {
  const { receiptId, reason, attempts, recordedAtMs, finalizedAt, detailSha256Hex } = readStoredDeadLetter(row);
  return { receiptId, reason, attempts, recordedAtMs, finalizedAt, detailSha256Hex };
}

/**
 * A dead-letter page's keys under a receipt prefix, the most recently recorded first: the
 * queue's choice (`unleasedPrefixKeys`) without leases. Up to PREFIX_SORT_CAP + 1 matches are
 * read from the prefix index, whose entries carry every other filter's column, and sorted
 * when they are all; past that the recorded order is walked with the prefix tested on each
 * entry. Left to the planner, the choice followed the histogram's guess of the prefix's
 * matches: the same 100,000 dead letters, analyzed twice, gave 0.3 ms by the prefix index
 * and 6.9 ms walking past 15,147 rows of the recorded order.
 */
function deadLetterPrefixKeys(prefix: string, others: SQL[], limit: number): SQL {
  const rest = and(others);
  return sql`with matches as materialized (
      select receipt_id, recorded_at_ms from settle.dead_letters
      where receipt_id ^@ ${prefix} and ${rest} limit ${PREFIX_SORT_CAP + 1}
    ),
    few as (select count(*) <= ${PREFIX_SORT_CAP} as yes from matches)
    (select m.receipt_id as key from matches m where (select yes from few)
     order by m.recorded_at_ms desc, m.receipt_id desc limit ${limit})
    union all
    (select k.receipt_id as key from settle.dead_letters k
     where not (select yes from few) and substr(k.receipt_id, 1, char_length(${prefix})) = ${prefix} and ${rest}
     order by k.recorded_at_ms desc, k.receipt_id desc limit ${limit})`;
}

/**
 * Dead letters, most recently recorded first, keyset-paged on `(recorded_at_ms,
 * receipt_id)`. The conditions are the bulk replay preview's, so the count shown is
 * the count a preview of the same filter freezes (while nothing arrives in between).
 */
export async function listDeadLetterPage(
  db: DbOrTx,
  filters: DeadLetterFilters & { cursor?: SettlementCursor | null },
  options: SettlementReadOptions = {},
): Promise<DeadLetterPage> {
  const filter = toDeadLetterFilter(filters);
  const { nowMs, sample } = await clockAndSample(db, isUnfiltered(filter), options);
  const pageSize = options.pageSize ?? SETTLEMENT_PAGE_SIZE;
  const where = and(deadLetterFilterConditions(filter, nowMs));
  const before = filters.cursor;
  const beforeConditions = before ? [sql`(recorded_at_ms, receipt_id) < (${before[0]}::bigint, ${before[1]})`] : [];
  const rowsFrom =
    filter.receiptIdPrefix !== undefined
      ? sql`settle.dead_letters join (${deadLetterPrefixKeys(
          filter.receiptIdPrefix,
          [...deadLetterFilterConditions({ ...filter, receiptIdPrefix: undefined }, nowMs), ...beforeConditions],
          pageSize + 1,
        )}) page on page.key = receipt_id`
      : sql`settle.dead_letters where ${and([where, ...beforeConditions])}`;
  const [page, count] = await Promise.all([
    db.execute<Row<StoredDeadLetter>>(sql`
      select ${DEAD_LETTER_COLUMNS} from ${rowsFrom}
      order by recorded_at_ms desc, receipt_id desc limit ${pageSize + 1}`),
    countUpToCap(db, sql`settle.dead_letters`, where, {
      sampled: isUnfiltered(filter) ? sampledFigure(sample, METRICS.deadLettersTotal) : null,
      ...countedUnderPrefix(filter),
      rememberAs: filterKey('dead-letters', filter),
    }),
  ]);
  const rows = page.rows.slice(0, pageSize).map(deadLetterListRow);
  const last = rows.at(-1);
  return {
    rows,
    nextCursor: page.rows.length > pageSize && last ? encodeCursor([last.recordedAtMs, last.receiptId]) : null,
    count,
    serverNowMs: nowMs,
  };
}

/** The dead-letter columns as the groups' statements name them (`settle.dead_letters d`). */
export const GROUP_FILTER_COLUMNS = {
  reason: sql`d.reason`,
  ageMs: sql`d.recorded_at_ms`,
  receiptId: sql`d.receipt_id`,
  attempts: sql`d.attempts`,
};

/**
 * Dead letters by reason code under the other filters, each count capped (countByReason),
 * so the cost stays bounded however many dead letters there are. Unfiltered, a code the
 * sampler last saw with many rows is not counted again.
 */
export async function deadLetterGroups(
  db: DbOrTx,
  filters: DeadLetterFilters,
  options: SettlementReadOptions = {},
): Promise<DeadLetterGroups> {
  // The groups are the reasons: the reason filter does not apply.
  const filter: DeadLetterFilter = { ...toDeadLetterFilter(filters) };
  delete filter.reason;
  const { nowMs, sample } = await clockAndSample(db, isUnfiltered(filter), options);
  const others = deadLetterFilterConditions(filter, nowMs, GROUP_FILTER_COLUMNS);
  // Unfiltered, a code the sampler last saw at SAMPLED_AS_IS_FROM or more takes that figure; the rest are counted.
  const sampled = new Map<string, number>();
  if (isUnfiltered(filter)) {
    for (const code of FAILURE_CODES) {
      const n = sampledFigure(sample, METRICS.deadLetters, code);
      if (n !== null && n >= SAMPLED_AS_IS_FROM) sampled.set(code, n);
    }
  }
  // A code past the cap a moment ago is not counted again (lib/queries/capped-count-memory.ts).
  const memory = cappedCountMemory();
  const mark = memory.mark();
  const groupKey = (code: string) => filterKey(`dead-letter-groups.${code}`, filter);
  const remembered = new Map<string, ListCount>();
  for (const code of FAILURE_CODES) {
    const count = sampled.has(code) ? undefined : (memory.recall(groupKey(code)) as ListCount | undefined);
    if (count) remembered.set(code, count);
  }
  const toCount = FAILURE_CODES.filter((code) => !sampled.has(code) && !remembered.has(code));
  const byReceipt = filter.receiptIdPrefix !== undefined || filter.receiptIds !== undefined;
  const counted = toCount.length === 0 ? [] : await countByReason(db, toCount, others, byReceipt);
  for (const r of counted) if (r.n > COUNT_CAP) memory.remember(groupKey(r.reason), groupCount(r.n), mark);
  const groups = [
    ...counted
      .filter((r) => r.n > 0)
      .map((r) => ({ reason: r.reason, count: { value: Math.min(r.n, COUNT_CAP), capped: r.n > COUNT_CAP } })),
    ...[...sampled].map(([reason, n]) => ({ reason, count: groupCount(n) })),
    ...[...remembered].map(([reason, count]) => ({ reason, count })),
  ].sort((a, b) => b.count.value - a.count.value || a.reason.localeCompare(b.reason));
  return { groups, serverNowMs: nowMs };
}

/**
 * Dead letters per reason code under `others`, each count capped. Under a receipt filter
 * (a prefix, or named receipts) the matches are few and found by the receipt index: one
 * pass over them, grouped, reading at most one cap's worth per code, with one capped range
 * per code when that budget runs out. Under any other filter (attempts, age) each code is
 * its own capped range of an index led by the reason, the filter inside it
 * (`dead_letters_reason_attempts_idx`, `dead_letters_reason_idx`): only the matches are
 * read, with no grouping of them (`minAttempts=5` over 100,000, 55,555 matching: 10 ms as
 * one grouped pass, 4 ms as ranges).
 */
async function countByReason(
  db: DbOrTx,
  codes: readonly string[],
  others: SQL[],
  byReceipt: boolean,
): Promise<{ reason: string; n: number }[]> {
  if (byReceipt) {
    const budget = codes.length * (COUNT_CAP + 1);
    // Every code wanted (a filtered view): no per-row test of the reason; a reason outside
    // the vocabulary is dropped here instead.
    const everyCode = codes.length === FAILURE_CODES.length;
    const ofCodes = everyCode ? sql`true` : sql`d.reason = any(${sql.param([...codes])}::text[])`;
    const { rows } = await db.execute<{ reason: string; n: number }>(sql`
      select reason, count(*)::int as n
      from (select d.reason from settle.dead_letters d where ${ofCodes} and ${and(others)} limit ${budget}) t
      group by reason`);
    if (rows.reduce((sum, r) => sum + r.n, 0) < budget) return rows.filter((r) => codes.includes(r.reason));
  }
  const { rows } = await db.execute<{ reason: string; n: number }>(reasonRangesQuery(codes, others));
  return rows;
}

/** Each code's dead letters under `others`, counted up to one past the cap in the code's own index range. */
export function reasonRangesQuery(codes: readonly string[], others: SQL[]): SQL {
  return sql`
    select code as reason,
           (select count(*)::int from (select 1 from settle.dead_letters d where d.reason = code and ${and(others)}
           limit ${COUNT_CAP + 1}) t) as n
    from unnest(${sql.param([...codes])}::text[]) as code`;
}

/** A group's sampled figure as the groups show counts: the cap itself when above it. */
function groupCount(n: number): ListCount {
  const count = sampledCount(n);
  return count.capped ? { ...count, value: COUNT_CAP } : count;
}

/** Everything Keel knows of one receipt: where it is, its events, replays and audit trail. Null if nothing. */
export async function readReceiptHistory(db: DbOrTx, receiptId: string): Promise<ReceiptHistory | null> {
  const [nowMs, queued, dead, events, replays, audit] = await Promise.all([
    settlementNowMs(db),
    db.execute<Row<Omit<QueueRow, 'state'> & { reasonDetailSha256Hex: string | null }>>(
      sql`select ${QUEUE_COLUMNS}, encode(reason_detail_sha256, 'hex') as "reasonDetailSha256Hex"
          from settle.attempts where receipt_id = ${receiptId}`,
    ),
    db.execute<Row<StoredDeadLetter>>(sql`
      select ${DEAD_LETTER_COLUMNS} from settle.dead_letters where receipt_id = ${receiptId}`),
    db.execute<Row<ReceiptHistory['events'][number]>>(sql`
      select id, kind, attempt, reason_code as "reasonCode", at_ms as "atMs", claimed_at_ms as "claimedAtMs"
      from keel.settlement_event
      where receipt_id = ${receiptId} order by id desc limit ${HISTORY_LIMIT + 1}`),
    db.execute<Row<ReceiptHistory['replays'][number]>>(sql`
      select operation_id as "operationId", prior_attempts as "priorAttempts", prior_reason as "priorReason",
             actor_login as "actorLogin", note, bulk_job as "bulkJob", at from keel.settlement_replay
      where receipt_id = ${receiptId} order by at desc, id desc limit ${HISTORY_LIMIT + 1}`),
    db.execute<Row<ReceiptHistory['audit'][number]>>(sql`
      select id, at, actor_login as "actorLogin", actor_role as "actorRole", action, outcome, code, reason
      from keel.audit_event
      where target_kind = 'settlement' and target_id = ${receiptId} order by at desc, id desc
      limit ${HISTORY_LIMIT + 1}`),
  ]);
  const queuedRow = queued.rows[0];
  if (!queuedRow && !dead.rows[0] && events.rows.length === 0 && replays.rows.length === 0 && audit.rows.length === 0)
    return null;
  const iso = (at: unknown) => new Date(at as string).toISOString();
  return {
    receiptId,
    serverNowMs: nowMs,
    queued: queuedRow ? { ...queuedRow, state: queueStateAt(queuedRow, nowMs) } : null,
    deadLetter: dead.rows[0] ? readStoredDeadLetter(dead.rows[0]) : null,
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
    workerInstance: job.workerInstance,
  };
}

/** Bulk replay jobs, newest first, keyset-paged on id (the primary key, or the status index). */
export async function listBulkReplays(
  db: DbOrTx,
  filters: { status?: BulkReplayJobView['status']; cursor?: number | null },
): Promise<BulkReplayListPage> {
  const before = filters.cursor;
  const parts: SQL[] = [];
  if (filters.status) parts.push(sql`status = ${filters.status}`);
  // A preview cancelled before it ever started replayed nothing: it leaves the default list (its page, its audit
  // events and the CANCELLED filter still show it), so abandoned previews do not pile up as jobs.
  else parts.push(sql`not (status = 'CANCELLED' and started_at is null)`);
  if (before) parts.push(sql`id < ${before}::bigint`);
  const [nowMs, page] = await Promise.all([
    settlementNowMs(db),
    db.execute<
      Row<
        BulkReplayJobView & {
          createdAt: string | Date;
          startedAt: string | Date | null;
          finishedAt: string | Date | null;
        }
      >
    >(sql`
      select id, action, status, note, filter, item_count as "itemCount", processed_count as "processedCount",
             created_by_login as "createdBy", started_by_login as "startedBy", created_at as "createdAt",
             started_at as "startedAt", finished_at as "finishedAt", worker_instance as "workerInstance"
      from keel.bulk_replay where ${and(parts)} order by id desc limit ${BULK_REPLAY_PAGE_SIZE + 1}`),
  ]);
  const jobs = page.rows.slice(0, BULK_REPLAY_PAGE_SIZE).map((j) => ({
    ...j,
    createdAt: new Date(j.createdAt).toISOString(),
    startedAt: isoOrNull(j.startedAt),
    finishedAt: isoOrNull(j.finishedAt),
  }));
  const last = jobs.at(-1);
  return {
    jobs,
    nextCursor: page.rows.length > BULK_REPLAY_PAGE_SIZE && last ? encodeCursor([last.id]) : null,
    serverNowMs: nowMs,
  };
}

export const BULK_ITEMS_PAGE_SIZE = 100;

/** A job's progress and one keyset page of its items (receipt order), optionally of one result. */
export async function readBulkReplayDetail(
  db: DbOrTx,
  jobId: number,
  page: { result?: BulkReplayItemOutcome | 'pending'; after?: string } = {},
): Promise<BulkReplayDetail | null> {
  const job = await readBulkReplayJob(db, jobId);
  if (!job) return null;
  const [counts, items, nowMs] = await Promise.all([
    countBulkReplayItems(db, jobId),
    listBulkReplayItems(db, jobId, { after: page.after, result: page.result, limit: BULK_ITEMS_PAGE_SIZE + 1 }),
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
