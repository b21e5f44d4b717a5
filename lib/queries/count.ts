import 'server-only';
import { sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';
import { COUNT_CAP, type CappedCount } from '../domain/cursor';
import { cappedCountMemory } from './capped-count-memory';

/**
 * A list's count: exact up to COUNT_CAP; above it `capped` is set and `value` is an
 * estimate (the planner's row estimate for the same filter, or the metric sampler's
 * last figure), flagged `estimated` (absent on an exact count), never a full count
 * over a large table. Pages show "10,000+" either way.
 */
export type ListCount = CappedCount & { estimated?: true };

/**
 * A planner estimate above this is taken as it stands, without counting: it would
 * have to be five times too high to hide a count under the cap. Counting first read
 * up to 10,001 matching rows on every render, and far more when no index serves the
 * filter.
 */
export const TRUSTED_ESTIMATE = 5 * COUNT_CAP;

/** What is known of a count before counting: nothing, or the sampler's figure for the unfiltered set. */
export interface CountHint {
  /** The metric sampler's last figure (at most two intervals old) for exactly these rows. */
  sampled?: number | null;
  /**
   * The filter compares with the clock inside the statement (clock_timestamp()), which the
   * planner cannot see: its estimate is a guess, so the rows are counted whatever it says.
   */
  blindEstimate?: boolean;
  /**
   * Counted every time, with no estimate first; above the cap the count is COUNT_CAP + 1,
   * flagged estimated. For rows from a source bounded by what they are (the leased rows,
   * read from their lease grants' ranges, lib/db/sql/lease-grants.ts), and for rows under a
   * receipt prefix, which one index holds together while the planner guesses their number
   * from a histogram: the guess would cost a round trip and a planning for a count that
   * reads at most COUNT_CAP + 1 index entries anyway.
   */
  alwaysCounted?: true;
  /**
   * The same rows counted as those of `superset` less those of `less`, a subset of it read
   * from a bounded source (the queue's due and retry rows: the rows at that side of the
   * clock, an index-only count, less the leased ones among them, read from their lease
   * grants). No row is read from the table to test its lease. `less` must be a relation
   * of distinct rows; when it holds more than COUNT_CAP, the rows are counted as usual.
   */
  countedAs?: { superset: SQL; less: SQL };
  /**
   * The key (`filterKey`) under which a count past the cap is remembered for a moment and
   * taken from instead of counting again (lib/queries/capped-count-memory.ts).
   */
  rememberAs?: string;
}

export interface CountPart {
  from: SQL;
  where: SQL;
  hint?: CountHint;
}

/** The planner's estimate of the rows a statement returns: planning only, nothing is read. */
export async function plannerEstimate(db: DbOrTx, statement: SQL): Promise<number> {
  const result = await db.execute<{ 'QUERY PLAN': [{ Plan: { 'Plan Rows': number } }] }>(
    sql`explain (format json) ${statement}`,
  );
  return Math.round(Number(result.rows[0]?.['QUERY PLAN']?.[0]?.Plan?.['Plan Rows'] ?? 0));
}

/**
 * A sampled figure from this size up is shown as it stands (taken at most two sampler
 * intervals ago, flagged `estimated`): counting again would read as many rows. Below
 * it the rows are counted, which is cheap and follows what a person just did to them.
 */
export const SAMPLED_AS_IS_FROM = 1_000;

const selectOf = (part: CountPart) => sql`select 1 from ${part.from} where ${part.where}`;
const estimated = (value: number): ListCount => ({
  value: Math.max(COUNT_CAP + 1, value),
  capped: true,
  estimated: true,
});
export const sampledCount = (value: number): ListCount =>
  value > COUNT_CAP ? estimated(value) : { value, capped: false, estimated: true };

/**
 * The estimate first: a sampled figure above the cap, or a planner estimate above
 * TRUSTED_ESTIMATE, is the answer. Otherwise the rows are counted, reading at most
 * COUNT_CAP + 1 of them; a count that still passes the cap carries the estimate.
 */
async function guide(db: DbOrTx, part: CountPart): Promise<{ settled: ListCount } | { estimate: number }> {
  const sampled = part.hint?.sampled;
  if (part.hint?.alwaysCounted) return { estimate: 0 };
  if (sampled != null && sampled >= SAMPLED_AS_IS_FROM) return { settled: sampledCount(sampled) };
  const estimate = sampled ?? (await plannerEstimate(db, selectOf(part)));
  if (sampled == null && !part.hint?.blindEstimate && estimate > TRUSTED_ESTIMATE)
    return { settled: estimated(estimate) };
  return { estimate };
}

const plainCappedCount = (part: CountPart) =>
  sql`(select count(*)::int from (${selectOf(part)} limit ${COUNT_CAP + 1}) t)`;

function cappedCount(part: CountPart): SQL {
  const countedAs = part.hint?.countedAs;
  if (!countedAs) return plainCappedCount(part);
  // Reading COUNT_CAP + 1 + less.n rows of the superset tells whether what remains passes the cap.
  return sql`(select case when less.n <= ${COUNT_CAP}
      then (select count(*)::int from (select 1 from ${part.from} where ${countedAs.superset}
      limit ${COUNT_CAP + 1} + less.n) t) - less.n
      else ${plainCappedCount(part)} end
    from (select count(*)::int as n from (select 1 from ${countedAs.less} l limit ${COUNT_CAP + 1}) x) less)`;
}

/** One list's count (see ListCount); `from` and `where` are the list's own. */
export async function countUpToCap(db: DbOrTx, from: SQL, where: SQL, hint?: CountHint): Promise<ListCount> {
  return (await countsUpToCap(db, { only: { from, where, hint } })).only;
}

/**
 * Several lists' counts: the estimates in parallel, then every count still needed in
 * one statement (one round trip), each exact up to the cap.
 */
export async function countsUpToCap<K extends string>(
  db: DbOrTx,
  parts: Record<K, CountPart>,
): Promise<Record<K, ListCount>> {
  const memory = cappedCountMemory();
  const mark = memory.mark();
  const counts = {} as Record<K, ListCount>;
  const settle = (key: K, count: ListCount) => {
    counts[key] = count;
    const rememberAs = parts[key].hint?.rememberAs;
    if (count.capped && rememberAs) memory.remember(rememberAs, count, mark);
  };
  const keys = (Object.keys(parts) as K[]).filter((key) => {
    const rememberAs = parts[key].hint?.rememberAs;
    const recalled = rememberAs ? (memory.recall(rememberAs) as ListCount | undefined) : undefined;
    if (recalled) counts[key] = recalled;
    return !recalled;
  });
  const guides = await Promise.all(keys.map((key) => guide(db, parts[key])));
  const toCount: { key: K; estimate: number }[] = [];
  keys.forEach((key, i) => {
    const g = guides[i]!;
    if ('settled' in g) settle(key, g.settled);
    else toCount.push({ key, estimate: g.estimate });
  });
  if (toCount.length === 0) return counts;
  const columns = toCount.map(({ key }, i) => sql`${cappedCount(parts[key])} as ${sql.raw(`c${i}`)}`);
  const { rows } = await db.execute<Record<string, number>>(sql`select ${sql.join(columns, sql`, `)}`);
  toCount.forEach(({ key, estimate }, i) => {
    const n = Number(rows[0]?.[`c${i}`] ?? 0);
    settle(key, n <= COUNT_CAP ? { value: n, capped: false } : estimated(estimate));
  });
  return counts;
}
