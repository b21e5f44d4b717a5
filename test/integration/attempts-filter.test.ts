import { sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { describe, expect, it } from 'vitest';
import { ATTEMPTS_PROBE_LIMIT, allOf, deadLetterFilterConditions } from '../../lib/db/sql/dead-letter-filter';
import type { DeadLetterFilter } from '../../lib/domain/dead-letter-filter';
import { deadLetterGroups, listDeadLetterPage, listSettlementQueue } from '../../lib/queries/settlements';
import { deadLetterFiltersSchema, queueFiltersSchema } from '../../lib/queries/settlements-types';
import { freshDatabase } from '../support/database';

/**
 * The attempts bounds are written as a list of counts when the range is narrow and as a
 * range otherwise (lib/db/sql/dead-letter-filter.ts). Either way they must select exactly
 * the rows `min <= attempts <= max` selects, on every bound around the list's limit.
 */
const { pool, db } = await freshDatabase();
const NOW = 1_700_000_000_000;
const TOP = ATTEMPTS_PROBE_LIMIT + 8;
const INT4_MAX = 2_147_483_647;
const U32_MAX = 4_294_967_295;
// Two rows per count from 0 to TOP, a few far above it, and two at the column's largest value.
await pool.query(
  `insert into settle.dead_letters (receipt_id, finalized_at, attempts, reason, canonical_json, recorded_at_ms)
   select 'att-' || lpad(n::text, 4, '0'), 1, case when n < 2 * ($2::int + 1) then n / 2
   else 1000 + n end, 'rpc', '{}', $1::bigint - n
   from generate_series(0, 2 * ($2::int + 1) + 3) n
   union all
   select 'att-top-' || n, 1, $3::int - n, 'rpc', '{}', $1::bigint from generate_series(0, 1) n`,
  [NOW, TOP, INT4_MAX],
);

async function selected(filter: DeadLetterFilter): Promise<string[]> {
  const { rows } = await db.execute<{ receipt_id: string }>(
    sql`select receipt_id from settle.dead_letters where ${allOf(deadLetterFilterConditions(filter, NOW))}
        order by receipt_id`,
  );
  return rows.map((r) => r.receipt_id);
}

async function inRange(min: number | undefined, max: number | undefined): Promise<string[]> {
  const { rows } = await pool.query<{ receipt_id: string }>(
    `select receipt_id from settle.dead_letters where attempts::bigint >= coalesce($1::bigint, 0)
     and attempts::bigint <= coalesce($2::bigint, ${U32_MAX}) order by receipt_id`,
    [min ?? null, max ?? null],
  );
  return rows.map((r) => r.receipt_id);
}

// Past the column's largest value (the filter takes any u32) a bound must still select exactly.
const BOUNDS = [
  undefined,
  0,
  1,
  5,
  ATTEMPTS_PROBE_LIMIT - 2,
  ATTEMPTS_PROBE_LIMIT - 1,
  ATTEMPTS_PROBE_LIMIT,
  ATTEMPTS_PROBE_LIMIT + 1,
  TOP,
  5_000,
  INT4_MAX - 1,
  INT4_MAX,
  INT4_MAX + 1,
  U32_MAX,
];
const CASES = BOUNDS.flatMap((min) => BOUNDS.map((max) => [min, max] as const));

describe('the attempts bounds of a settlement filter', () => {
  it.each(CASES)('select the rows of the range: min %s, max %s', async (min, max) => {
    const filter: DeadLetterFilter = {
      ...(min !== undefined && { minAttempts: min }),
      ...(max !== undefined && { maxAttempts: max }),
    };
    const expected = await inRange(min, max);
    expect(await selected(filter)).toEqual(expected);
    if (min !== undefined && max !== undefined && min > max) expect(expected).toEqual([]);
  });

  it('past the column’s largest value answer the lists and groups instead of failing their statements', async () => {
    for (const words of [
      { minAttempts: String(INT4_MAX + 1) },
      { maxAttempts: String(U32_MAX) },
      { minAttempts: String(INT4_MAX), maxAttempts: String(U32_MAX) },
    ]) {
      const expected = await inRange(
        words.minAttempts === undefined ? undefined : Number(words.minAttempts),
        words.maxAttempts === undefined ? undefined : Number(words.maxAttempts),
      );
      const page = await listDeadLetterPage(db, deadLetterFiltersSchema.parse(words), { nowMs: NOW, pageSize: 1_000 });
      expect(page.rows.map((r) => r.receiptId).sort()).toEqual(expected);
      const groups = await deadLetterGroups(db, deadLetterFiltersSchema.parse(words), { nowMs: NOW });
      expect(groups.groups.reduce((sum, g) => sum + g.count.value, 0)).toBe(expected.length);
      const queue = await listSettlementQueue(db, queueFiltersSchema.parse({ ...words, state: 'all' }), {
        nowMs: NOW,
        sample: null,
      });
      expect(queue.rows).toEqual([]);
    }
  });

  it('probe each count of a narrow range and read a wide one as a range', () => {
    const dialect = new PgDialect();
    const text = (filter: DeadLetterFilter) => allOf(deadLetterFilterConditions(filter, NOW)).getSQL();
    const narrow = dialect.sqlToQuery(text({ maxAttempts: 1 }));
    expect(narrow.sql).toContain('= any(');
    expect(narrow.params).toEqual([[0, 1]]);
    const shifted = dialect.sqlToQuery(text({ minAttempts: 3, maxAttempts: 3 + ATTEMPTS_PROBE_LIMIT - 1 }));
    expect(shifted.params[0]).toHaveLength(ATTEMPTS_PROBE_LIMIT);
    const wide = dialect.sqlToQuery(text({ minAttempts: 3, maxAttempts: 3 + ATTEMPTS_PROBE_LIMIT }));
    expect(wide.sql).not.toContain('any(');
    expect(wide.params).toEqual([3, 3 + ATTEMPTS_PROBE_LIMIT]);
    expect(dialect.sqlToQuery(text({ minAttempts: 4 })).sql).toContain('>=');
  });
});
