import 'server-only';
import { sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';
import { COUNT_CAP, type CappedCount } from '../domain/cursor';

/**
 * A list's count: exact up to COUNT_CAP; above it `capped` is set and `value` is the
 * planner's row estimate for the same filter (EXPLAIN's top-node rows), flagged
 * `estimated` (absent on an exact count), never a full count over a large table. Pages show "10,000+" either way.
 */
export type ListCount = CappedCount & { estimated?: true };

/** `from` and `where` are the list's own; the exact part reads at most COUNT_CAP + 1 rows. */
export async function countUpToCap(db: DbOrTx, from: SQL, where: SQL): Promise<ListCount> {
  const result = await db.execute<{ n: number }>(sql`select count(*)::int as n from (select 1 from ${from} where ${where} limit ${COUNT_CAP + 1}) t`);
  const n = result.rows[0]?.n ?? 0;
  if (n <= COUNT_CAP) return { value: n, capped: false };
  return { value: Math.max(COUNT_CAP + 1, await plannerEstimate(db, sql`select 1 from ${from} where ${where}`)), capped: true, estimated: true };
}

/** The planner's estimate of the rows a statement returns: planning only, nothing is read. */
export async function plannerEstimate(db: DbOrTx, statement: SQL): Promise<number> {
  const result = await db.execute<{ 'QUERY PLAN': [{ Plan: { 'Plan Rows': number } }] }>(sql`explain (format json) ${statement}`);
  return Math.round(Number(result.rows[0]?.['QUERY PLAN']?.[0]?.Plan?.['Plan Rows'] ?? 0));
}

/** Several capped counts in one statement (one round trip), each exact up to the cap. */
export async function countsUpToCap<K extends string>(db: DbOrTx, parts: Record<K, { from: SQL; where: SQL }>): Promise<Record<K, ListCount>> {
  const keys = Object.keys(parts) as K[];
  const columns = keys.map(
    (key, i) => sql`(select count(*)::int from (select 1 from ${parts[key].from} where ${parts[key].where} limit ${COUNT_CAP + 1}) t) as ${sql.raw(`c${i}`)}`,
  );
  const result = await db.execute<Record<string, number>>(sql`select ${sql.join(columns, sql`, `)}`);
  const row = result.rows[0] ?? {};
  const counts = {} as Record<K, ListCount>;
  await Promise.all(
    keys.map(async (key, i) => {
      const n = Number(row[`c${i}`] ?? 0);
      counts[key] = n <= COUNT_CAP
        ? { value: n, capped: false }
        : { value: Math.max(COUNT_CAP + 1, await plannerEstimate(db, sql`select 1 from ${parts[key].from} where ${parts[key].where}`)), capped: true, estimated: true };
    }),
  );
  return counts;
}
