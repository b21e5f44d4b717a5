import { describe, expect, it } from 'vitest';
import { parseSettings } from '../../lib/config/settings';
import { SeededRandom } from '../../lib/demo/random';
import { startDemoRuntime } from '../../lib/demo/runtime';
import { seedSettlements } from '../../lib/demo/seed-settlements';
import { freshDatabase } from '../support/database';

const { pool, db } = await freshDatabase();
const RUN_MS = 24_000;
const SAMPLE_MS = 4_000;

async function invariants() {
  const { rows } = await pool.query(`
    select (select count(*)::int from settle.attempts a join settle.dead_letters d using (receipt_id)) as both_places,
           (select count(*)::int from settle.attempts
             where num_nonnulls(lease_owner, lease_token, lease_until_ms) not in (0, 3)) as partial_leases,
           (select count(*)::int from keel.settlement_event where kind = 'finished') as finished,
           (select coalesce(max(id), 0)::int from settle.lease_grants) as last_grant`);
  return rows[0] as { both_places: number; partial_leases: number; finished: number; last_grant: number };
}

/** Seeded rows whose fake worker's lease had already run out when the run began. */
async function staleSeededLeases(startedAt: number): Promise<number> {
  const { rows } = await pool.query(
    `select count(*)::int as n from settle.attempts where lease_owner like 'settle-worker-%' and lease_until_ms <= $1`,
    [startedAt],
  );
  return rows[0].n;
}

describe('demo runtime: settlement workers', () => {
  it('keeps settlements moving on a seeded database without breaking the store invariants', async () => {
    const startedAt = Date.now();
    const seeded = await seedSettlements(db, new SeededRandom(7), startedAt);
    expect(seeded.attempts).toBeGreaterThan(4_000);
    await pool.query(`create table public.seeded as select receipt_id from settle.attempts`);
    const staleAtStart = await staleSeededLeases(startedAt);
    expect(staleAtStart).toBeGreaterThan(0);
    const settings = parseSettings({ KEEL_DEMO: '1' });
    if (!settings.ok) throw new Error('settings');
    const lines: string[] = [];
    const runtime = startDemoRuntime({
      db,
      settings: settings.value,
      log: (level, message, fields) => lines.push(`${level} ${message} ${JSON.stringify(fields ?? {})}`),
    });

    const samples: Awaited<ReturnType<typeof invariants>>[] = [];
    try {
      for (let elapsed = 0; elapsed < RUN_MS; elapsed += SAMPLE_MS) {
        await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS));
        samples.push(await invariants());
      }
    } finally {
      await runtime.stop();
    }

    for (const sample of samples) expect(sample).toMatchObject({ both_places: 0, partial_leases: 0 });
    // Moving: every window finished more settlements than the one before it ended with.
    for (let i = 1; i < samples.length; i += 1) expect(samples[i]!.finished).toBeGreaterThan(samples[i - 1]!.finished);

    const { rows } = await pool.query(
      `
      select (select count(*)::int from keel.settlement_event where kind = 'retry_scheduled'
      and at_ms >= $1) as retries,
             (select count(*)::int from keel.settlement_event where kind = 'dead_lettered'
             and at_ms >= $1) as dead_lettered,
             (select count(*)::int from settle.dead_letters where recorded_at_ms >= $1) as new_dead_letters,
             (select count(*)::int from keel.settlement_event e where claimed_at_ms >= $1
                and not exists (select 1 from public.seeded s
                where s.receipt_id = e.receipt_id)) as new_receipts_claimed,
             (select count(*)::int from settle.attempts a
               where not exists (select 1 from public.seeded s
               where s.receipt_id = a.receipt_id)) as new_receipts_queued`,
      [startedAt],
    );
    const moved = rows[0];
    console.info(
      `[measure] demo runtime ${RUN_MS / 1000}s: ${samples.at(-1)!.finished} finished, ` +
        `${moved.retries} retries, ${moved.dead_lettered} dead-lettered`,
    );
    expect(moved.retries).toBeGreaterThan(0);
    expect(moved.dead_lettered).toBeGreaterThan(0);
    expect(moved.new_dead_letters).toBe(moved.dead_lettered);
    // Fresh receipts keep arriving; under load they may still wait behind the seeded backlog.
    expect(moved.new_receipts_queued + moved.new_receipts_claimed).toBeGreaterThan(0);
    // Leases the seed left expired are taken over by the demo workers as they come due.
    expect(await staleSeededLeases(startedAt)).toBeLessThan(staleAtStart);

    const stopped = await invariants();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    // Stopped workers claim nothing more: every claim that takes a row writes a lease grant.
    expect((await invariants()).last_grant).toBe(stopped.last_grant);
    expect(lines.some((line) => line.startsWith('info demo settlement workers stopped'))).toBe(true);
    // The other default drivers ran alongside: on an unseeded database the batch workers
    // registered the demo definitions themselves; without a checkpoint key no orchestrator starts.
    const batch = await pool.query(`select (select count(*)::int from oxide_batch.ob_job_definition) as definitions,
                                           (select count(*)::int from oxide_batch.ob_job_execution) as executions`);
    expect(batch.rows[0].definitions).toBe(6);
    expect(batch.rows[0].executions).toBeGreaterThan(0);
    expect(lines.some((line) => line.startsWith('warn demo orchestrations need KEEL_CHECKPOINT_KEY'))).toBe(true);
    expect(lines.join('\n')).not.toMatch(/rcpt_|token/i);
  }, 90_000);
});
