import { describe, expect, it } from 'vitest';
import { deadLetterActionSchema } from '../../app/actions/settlement-schemas';
import { postgresSettlementUnitOfWork } from '../../lib/adapters/settlement-replay';
import type { Actor } from '../../lib/domain/actor';
import { CAPPED_COUNT_MEMORY_MS, cappedCountMemory } from '../../lib/queries/capped-count-memory';
import { deadLetterGroups, listDeadLetterPage } from '../../lib/queries/settlements';
import { deadLetterFiltersSchema } from '../../lib/queries/settlements-types';
import { replayDeadLetter } from '../../lib/services/dead-letter-actions';
import { actionAs } from '../support/actions';
import { freshDatabase } from '../support/database';

// A database of its own: ten thousand rows written and deleted here would move the planner's
// choices in another file's plan tests.
const { pool, db } = await freshDatabase();
const NOW = 1_700_000_000_000;
const support: Actor = { id: 'u-support', login: 'support', name: 'Sam Support', role: 'support' };
const dead = (filters: Record<string, unknown>) => deadLetterFiltersSchema.parse(filters);
const ids = async (text: string) => (await pool.query<{ receipt_id: string }>(text)).rows.map((r) => r.receipt_id);

describe('counts past the cap', () => {
  it('remembers a count past its cap for a moment, never one below it, and forgets on an applied action', async () => {
    await pool.query(
      `insert into settle.dead_letters select 'mem-' || n, 1, 1, 'unsupported', '{}', $1
     from generate_series(1, 10003) n`,
      [NOW],
    );
    // The memory's clock stands still: what is remembered stays until the test moves it.
    const memory = cappedCountMemory();
    const clock = memory.now;
    let now = 0;
    memory.now = () => now;
    const memCount = async () => (await listDeadLetterPage(db, dead({ q: 'mem-' }))).count;
    const below = async (n: number) => {
      await pool.query(
        `delete from settle.dead_letters where receipt_id in (select receipt_id from
      settle.dead_letters where receipt_id like 'mem-%' order by receipt_id limit $1)`,
        [n],
      );
    };
    expect(await memCount()).toMatchObject({ capped: true });
    const groups = await deadLetterGroups(db, dead({ q: 'mem-' }));
    expect(groups.groups).toEqual([{ reason: 'unsupported', count: { value: 10_000, capped: true } }]);
    await below(10);
    // 9,993 rows now: both counts are still the remembered "10,000+" ...
    expect(await memCount()).toMatchObject({ capped: true });
    expect((await deadLetterGroups(db, dead({ q: 'mem-' }))).groups[0]!.count).toMatchObject({ capped: true });
    // ... but not under another filter, nor the queue's count of the same rows on another list.
    const underMem1 = await ids(`select receipt_id from settle.dead_letters where receipt_id like 'mem-1%'`);
    expect((await listDeadLetterPage(db, dead({ q: 'mem-1' }))).count).toEqual({
      value: underMem1.length,
      capped: false,
    });
    // An applied action forgets them: the next view counts.
    const replay = actionAs(db, support, deadLetterActionSchema, 'settlement.replay', (who, input) =>
      replayDeadLetter({ unitOfWork: postgresSettlementUnitOfWork(db) }, who, input),
    );
    const replayed = await replay({ receiptId: 'mem-9999', note: 'counted again', operationId: 'op-mem-1' });
    expect(replayed.ok).toBe(true);
    expect(await memCount()).toEqual({ value: 9_992, capped: false });
    expect((await deadLetterGroups(db, dead({ q: 'mem-' }))).groups[0]!.count).toEqual({
      value: 9_992,
      capped: false,
    });
    // A count below the cap is never remembered: it follows every change.
    await below(2);
    expect(await memCount()).toEqual({ value: 9_990, capped: false });
    // Past the cap again, then its moment passes: counted again.
    await pool.query(
      `insert into settle.dead_letters select 'mem-x' || n, 1, 1, 'unsupported', '{}', $1
     from generate_series(1, 20) n`,
      [NOW],
    );
    expect(await memCount()).toMatchObject({ capped: true });
    await below(20);
    expect(await memCount()).toMatchObject({ capped: true });
    now += CAPPED_COUNT_MEMORY_MS;
    expect(await memCount()).toEqual({ value: 9_990, capped: false });
    memory.now = clock;
  });
});
