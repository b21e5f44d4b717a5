import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { postgresBulkReplayStore } from '../../lib/adapters/bulk-replay';
import { postgresSettlementUnitOfWork } from '../../lib/adapters/settlement-replay';
import type { Actor } from '../../lib/domain/actor';
import { toDeadLetterFilter } from '../../lib/domain/dead-letter-filter';
import { listDeadLetterPage } from '../../lib/queries/settlements';
import { deadLetterFiltersSchema } from '../../lib/queries/settlements-types';
import { previewBulkReplay } from '../../lib/services/bulk-replay';
import { freshDatabase } from '../support/database';

/**
 * The dead-letter list and the bulk replay preview must select the same rows for the
 * same filter: what an operator sees is what a bulk replay freezes. Each case goes from
 * the URL's words, as the page and the bulk replay dialog do, so the words' translation
 * is held equal too. Ages sit exactly on, and one millisecond either side of, each bound.
 */
const { pool, db } = await freshDatabase();
const NOW = 1_700_000_000_000;
const MIN = 60_000;
const HOUR = 3_600_000;
const support: Actor = { id: 'u-support', login: 'support', name: 'Sam Support', role: 'support' };

// Ages on and around 30m, 2h and 6h; reasons, attempts and prefixes spread across them.
const AGES = [
  0,
  30 * MIN - 1,
  30 * MIN,
  30 * MIN + 1,
  2 * HOUR - 1,
  2 * HOUR,
  2 * HOUR + 1,
  6 * HOUR - 1,
  6 * HOUR,
  6 * HOUR + 1,
  48 * HOUR,
];
const REASONS = ['rpc', 'backend', 'signature', 'invalid_input'];
await pool.query(
  `insert into settle.dead_letters (receipt_id, finalized_at, attempts, reason, canonical_json, recorded_at_ms)
   select (array['par-a', 'par-b', 'par_%'])[1 + n % 3] || lpad(n::text, 3, '0'),
   1, n % 7, ($2::text[])[1 + n % 4], '{}',
          $1::bigint - ($3::bigint[])[1 + n % ${AGES.length}]
   from generate_series(0, 263) n`,
  [NOW, REASONS, AGES],
);
// Rows the prefix must not take: `%` and `_` mean themselves.
await pool.query(
  `insert into settle.dead_letters (receipt_id, finalized_at, attempts, reason, canonical_json, recorded_at_ms)
   values ('parXa001', 1, 1, 'rpc', '{}', $1::bigint), ('par-x-ab', 1, 1, 'rpc', '{}', $1::bigint)`,
  [NOW],
);

async function listed(words: Record<string, string>): Promise<string[]> {
  const page = await listDeadLetterPage(db, deadLetterFiltersSchema.parse(words), { nowMs: NOW, pageSize: 1_000 });
  expect(page.nextCursor).toBeNull();
  return page.rows.map((r) => r.receiptId).sort();
}

async function frozen(words: Record<string, string>): Promise<string[]> {
  const filter = toDeadLetterFilter(deadLetterFiltersSchema.parse(words));
  return db.transaction(async (tx) => {
    const { jobId } = await postgresBulkReplayStore(tx).createPreview({
      actor: support,
      action: 'REPLAY',
      note: 'parity',
      filter,
      asOfMs: NOW,
      limit: 100_000,
    });
    const { rows } = await tx.execute<{ receipt_id: string }>(
      sql`select receipt_id from keel.bulk_replay_item where job = ${jobId}::bigint order by receipt_id`,
    );
    return rows.map((r) => r.receipt_id);
  });
}

const CASES: [string, Record<string, string>][] = [
  ['no filter', {}],
  ['reason', { reason: 'backend' }],
  ['receipt prefix', { q: 'par-b' }],
  ['receipt prefix with % and _', { q: 'par_%' }],
  ['minimum attempts', { minAttempts: '4' }],
  ['maximum attempts', { maxAttempts: '2' }],
  ['attempts range of one', { minAttempts: '3', maxAttempts: '3' }],
  ['minimum age on a bound', { minAge: '2h' }],
  ['maximum age on a bound', { maxAge: '2h' }],
  ['minimum age in minutes', { minAge: '30m' }],
  ['maximum age in seconds', { maxAge: '1800s' }],
  ['age window', { minAge: '30m', maxAge: '6h' }],
  ['age window of one instant', { minAge: '2h', maxAge: '120m' }],
  [
    'every field at once',
    { reason: 'rpc', q: 'par-a', minAttempts: '1', maxAttempts: '5', minAge: '30m', maxAge: '2d' },
  ],
];

describe('the dead-letter list and the bulk replay preview', () => {
  it.each(CASES)('select the same rows: %s', async (_name, words) => {
    const fromList = await listed(words);
    expect(await frozen(words)).toEqual(fromList);
    // Every case selects something and, but for "no filter",
    // leaves something out, so a field ignored by one side fails.
    expect(fromList.length).toBeGreaterThan(0);
    if (Object.keys(words).length > 0) expect(fromList.length).toBeLessThan(266);
  });

  it('take the age bounds inclusively, one millisecond either side excluded', async () => {
    const ages = async (words: Record<string, string>) => {
      const { rows } = await pool.query<{ age: string }>(
        `select distinct ($1::bigint - recorded_at_ms)::text as age from settle.dead_letters
         where receipt_id = any($2::text[]) order by 1`,
        [NOW, await frozen(words)],
      );
      return rows.map((r) => Number(r.age)).sort((a, b) => a - b);
    };
    expect(await ages({ minAge: '2h', maxAge: '6h' })).toEqual([2 * HOUR, 2 * HOUR + 1, 6 * HOUR - 1, 6 * HOUR]);
    expect(await ages({ maxAge: '30m' })).toEqual([0, 30 * MIN - 1, 30 * MIN]);
  });

  it('hold through the service too: a preview counts what the list counts at the preview time', async () => {
    const words = { reason: 'signature', q: 'par-', maxAttempts: '5', minAge: '1s' };
    const preview = await previewBulkReplay({ unitOfWork: postgresSettlementUnitOfWork(db) }, support, {
      filter: toDeadLetterFilter(deadLetterFiltersSchema.parse(words)),
      note: 'parity through the service',
    });
    if (!preview.ok) throw new Error(preview.error.code);
    const page = await listDeadLetterPage(db, deadLetterFiltersSchema.parse(words), {
      nowMs: preview.value.asOfMs,
      pageSize: 1_000,
    });
    expect(preview.value.itemCount).toBe(page.rows.length);
    expect(page.rows.length).toBeGreaterThan(0);
  });
});
