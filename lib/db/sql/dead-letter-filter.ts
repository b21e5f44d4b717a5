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
  if (filter.minAttempts !== undefined) parts.push(sql`${columns.attempts} >= ${filter.minAttempts}::int`);
  if (filter.maxAttempts !== undefined) parts.push(sql`${columns.attempts} <= ${filter.maxAttempts}::int`);
  if (filter.minAgeMs !== undefined) parts.push(sql`${columns.ageMs} <= ${asOfMs - filter.minAgeMs}::bigint`);
  if (filter.maxAgeMs !== undefined) parts.push(sql`${columns.ageMs} >= ${asOfMs - filter.maxAgeMs}::bigint`);
  if (filter.receiptIds !== undefined) parts.push(sql`${columns.receiptId} = any(${sql.param(filter.receiptIds)}::text[])`);
  return parts;
}

/** Conditions joined with `and`; `true` when there are none. */
export const allOf = (parts: readonly SQL[]): SQL => (parts.length ? sql.join([...parts], sql` and `) : sql`true`);
