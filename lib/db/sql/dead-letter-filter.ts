import { sql, type SQL } from 'drizzle-orm';
import type { DeadLetterFilter } from '../../domain/dead-letter-filter';

/** The columns a filter reads; the queue view filters `settle.attempts` by its own reason and due time. */
export interface DeadLetterFilterColumns {
  reason: SQL;
  /** The epoch-ms column ages are measured on. */
  ageMs: SQL;
  receiptId: SQL;
  attempts: SQL;
}

export const DEAD_LETTER_COLUMNS_FOR_FILTER: DeadLetterFilterColumns = {
  reason: sql`reason`,
  ageMs: sql`recorded_at_ms`,
  receiptId: sql`receipt_id`,
  attempts: sql`attempts`,
};

/**
 * The filter as SQL conditions, ages measured from `asOfMs` (the server's time). The
 * one builder of the dead-letter list, its groups, the queue view and the bulk replay
 * preview, so they select the same rows for the same filter.
 */
export function deadLetterFilterConditions(
  filter: DeadLetterFilter,
  asOfMs: number,
  columns: DeadLetterFilterColumns = DEAD_LETTER_COLUMNS_FOR_FILTER,
): SQL[] {
  const parts: SQL[] = [];
  if (filter.reason !== undefined) parts.push(sql`${columns.reason} = ${filter.reason}`);
  // ^@ (not starts_with or LIKE): the text_pattern_ops index serves it, and % or _ mean themselves.
  if (filter.receiptIdPrefix !== undefined) parts.push(sql`${columns.receiptId} ^@ ${filter.receiptIdPrefix}`);
  parts.push(...attemptsConditions(filter, columns.attempts));
  if (filter.minAgeMs !== undefined) parts.push(sql`${columns.ageMs} <= ${asOfMs - filter.minAgeMs}::bigint`);
  if (filter.maxAgeMs !== undefined) parts.push(sql`${columns.ageMs} >= ${asOfMs - filter.maxAgeMs}::bigint`);
  if (filter.receiptIds !== undefined)
    parts.push(sql`${columns.receiptId} = any(${sql.param(filter.receiptIds)}::text[])`);
  return parts;
}

/** The largest value of a PostgreSQL `integer`, the type of both tables' `attempts`. */
export const INT4_MAX = 2_147_483_647;

/** Up to this many attempt counts are probed one by one rather than read as a range. */
export const ATTEMPTS_PROBE_LIMIT = 32;

/**
 * The attempts bounds. A range bounded on both sides (the lower bound is 0 when only the
 * upper is given: both tables check `attempts >= 0`) and no wider than
 * ATTEMPTS_PROBE_LIMIT is written as `attempts = any(<each count>)`: each count is then its
 * own descent of an index led by attempts, with the due time or age inside it as a range.
 * As `attempts <= n` the scan would step over every entry of the lower counts outside the
 * time range (`attempts_attempts_due_idx`: the retry count under `maxAttempts=1`, 185 ms
 * against 7 ms on the loaded queue). The two forms select the same rows.
 */
function attemptsConditions(filter: DeadLetterFilter, attempts: SQL): SQL[] {
  // The filter takes any u32; the columns are PostgreSQL integers, and a bound past their
  // largest value, sent as one, would fail the statement. Past it, a minimum matches no row
  // and a maximum narrows nothing.
  if (filter.minAttempts !== undefined && filter.minAttempts > INT4_MAX) return [sql`false`];
  const minAttempts = filter.minAttempts;
  const maxAttempts =
    filter.maxAttempts !== undefined && filter.maxAttempts < INT4_MAX ? filter.maxAttempts : undefined;
  const lowest = minAttempts ?? 0;
  if (maxAttempts !== undefined && maxAttempts - lowest < ATTEMPTS_PROBE_LIMIT) {
    // Above the maximum, a minimum leaves no count: an empty list, which matches no row.
    const counts = Array.from({ length: Math.max(0, maxAttempts - lowest + 1) }, (_, i) => lowest + i);
    return [sql`${attempts} = any(${sql.param(counts)}::int[])`];
  }
  const parts: SQL[] = [];
  if (minAttempts !== undefined) parts.push(sql`${attempts} >= ${minAttempts}::int`);
  if (maxAttempts !== undefined) parts.push(sql`${attempts} <= ${maxAttempts}::int`);
  return parts;
}

/** Conditions joined with `and`; `true` when there are none. */
export const allOf = (parts: readonly SQL[]): SQL => (parts.length ? sql.join([...parts], sql` and `) : sql`true`);
