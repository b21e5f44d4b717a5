import { sql, type SQL } from 'drizzle-orm';
import type { QueueState } from '../../domain/queue-state';

/**
 * The SQL form of lib/domain/queue-state.ts over `settle.attempts`. `now` is the
 * server's epoch ms (a number is bound as a bigint); `alias` qualifies the columns
 * when the statement names the table (a constant, never input).
 */
type Now = SQL | number;

const nowSql = (now: Now): SQL => (typeof now === 'number' ? sql`${now}::bigint` : now);
const column = (alias: string | undefined, name: string): SQL => sql.raw(alias ? `${alias}.${name}` : name);

/**
 * Held by a lease that outlives `now`. No index covers the lease columns: one would
 * make every claim a non-HOT update (drizzle/0017), so this state is read by a scan.
 */
export function leasedAt(now: Now, alias?: string): SQL {
  return sql`(${column(alias, 'lease_owner')} is not null and ${column(alias, 'lease_until_ms')} > ${nowSql(now)})`;
}

/** No live lease: none, or one that has lapsed (the lease columns are all set or all null). */
export function unleasedAt(now: Now, alias?: string): SQL {
  return sql`(${column(alias, 'lease_owner')} is null or ${column(alias, 'lease_until_ms')} <= ${nowSql(now)})`;
}

/** The side of the clock a due or a retry row is on, its lease apart. */
export function clockSideAt(state: 'due' | 'retry_scheduled', now: Now, alias?: string): SQL {
  return state === 'due'
    ? sql`${column(alias, 'next_visible_at_ms')} <= ${nowSql(now)}`
    : sql`${column(alias, 'next_visible_at_ms')} > ${nowSql(now)}`;
}

/** Due and not held by a live lease: what a worker may claim and what the queue shows as `due`. */
export function claimableAt(now: Now, alias?: string): SQL {
  return sql`(${clockSideAt('due', now, alias)} and ${unleasedAt(now, alias)})`;
}

/** Rows in one state at `now`. */
export function inQueueState(state: QueueState, now: Now, alias?: string): SQL {
  if (state === 'leased') return leasedAt(now, alias);
  if (state === 'due') return claimableAt(now, alias);
  return sql`(${clockSideAt('retry_scheduled', now, alias)} and ${unleasedAt(now, alias)})`;
}

/** The state as a text column: `due`, `leased` or `retry_scheduled`. */
export function queueStateCase(now: Now, alias?: string): SQL {
  return sql`case when ${leasedAt(now, alias)} then 'leased'
                  when ${column(alias, 'next_visible_at_ms')} > ${nowSql(now)} then 'retry_scheduled'
                  else 'due' end`;
}
