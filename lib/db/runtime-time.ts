import { sql, type SQL } from 'drizzle-orm';

/**
 * The runtime's own conversion of a timestamptz to epoch milliseconds
 * (docs/design.md#runtime-timestamps): the bigint cast rounds, so a value ending in .678999 ms reads as 679. Every
 * time that enters a digest or a rule goes through this expression and no other.
 */
export const runtimeEpochMsText = (column: string): string => `(extract(epoch from ${column}) * 1000)::bigint`;

export const runtimeEpochMs = (column: SQL): SQL => sql`(extract(epoch from ${column}) * 1000)::bigint`;

/** The database's clock in epoch milliseconds, by the runtime's expression. */
export const runtimeServerTimeMs: SQL = sql`(extract(epoch from clock_timestamp()) * 1000)::bigint`;

/** The instant Keel writes into `oxide_batch`: whole milliseconds, as the runtime's own writes are. */
export const wholeMillisecondNow: SQL = sql`date_trunc('milliseconds', clock_timestamp())`;
export const WHOLE_MILLISECOND_NOW_TEXT = `date_trunc('milliseconds', clock_timestamp())`;

/**
 * The proposer's staleness rule on a column, `server ms - updated ms > threshold` with
 * both sides by the runtime's expression, written as a bound on the column itself:
 * round(u) < N holds exactly when u < N - 0.5 ms, so the row's timestamp compares
 * against one instant and an index on it still serves.
 */
export function runtimeStaleBefore(column: SQL, thresholdMs: number, now: SQL = runtimeServerTimeMs): SQL {
  return sql`${column} < timestamptz 'epoch'
             + ((${now} - ${Math.trunc(thresholdMs)}::bigint) * 1000 - 500) * interval '1 microsecond'`;
}
