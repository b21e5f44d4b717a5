import { describe, expect, it } from 'vitest';
import { postgresSettlementStore } from '../../lib/simulator/adapters/settlement-store';
import { createDatabase } from '../../lib/db/client';
import { DEFAULT_RETRY_POLICY, type SettlementAttemptClaim } from '../../lib/domain/settlement';
import { freshDatabase } from '../support/database';

const { pool, newPool } = await freshDatabase();
const ROWS = 20_000;
const WORKERS = 8;
const RECORDED_ROWS = 5_000;
const NOW = 1_800_000_000_000;

/**
 * Due rows in chunks: the one-place trigger takes a transaction lock per inserted
 * receipt, so one 20,000-row statement would exhaust the default lock table.
 */
async function queueDueRows(prefix: string, rows = ROWS): Promise<void> {
  for (let start = 0; start < rows; start += 2_000) {
    await pool.query(
      `insert into settle.attempts (receipt_id, finalized_at, work_kind, attempts, next_visible_at_ms, row_version,
       updated_at_ms)
       select $1 || lpad(n::text, 6, '0'), 1, 'pending_observation', 0, $2::bigint - (n % 997), 0, 1
       from generate_series($3::int, $4::int) as n`,
      [prefix, NOW, start, Math.min(start + 1_999, rows - 1)],
    );
  }
}

/** One worker on a pool of its own, claiming until the queue looks empty to it. */
async function runWorker(
  worker: string,
  limit: number,
  onClaims: (store: ReturnType<typeof postgresSettlementStore>, claims: SettlementAttemptClaim[]) => Promise<void>,
  nowMs = NOW,
): Promise<string[]> {
  const store = postgresSettlementStore(createDatabase(newPool(2)));
  const seen: string[] = [];
  for (;;) {
    const result = await store.claimDue(worker, nowMs, 600_000, limit);
    if (!result.ok) throw new Error(`${worker}: ${result.error.kind}`);
    if (result.value.length === 0) return seen;
    seen.push(...result.value.map((claim) => claim.receiptId));
    await onClaims(store, result.value);
  }
}

describe('claimDue under concurrent workers', () => {
  it(`${WORKERS} workers over ${ROWS} due rows never claim a row twice and leave none behind`, async () => {
    await queueDueRows('c-');
    const started = performance.now();
    const perWorker = await Promise.all(
      Array.from({ length: WORKERS }, (_, i) => runWorker(`claimer-${i}`, 256, async () => {})),
    );
    const elapsedMs = performance.now() - started;
    console.info(`[measure] claimDue ${WORKERS} workers x ${ROWS} rows (batches of 256): ${elapsedMs.toFixed(0)} ms`);

    const all = perWorker.flat();
    expect(all).toHaveLength(ROWS);
    expect(new Set(all).size).toBe(ROWS);
    // SKIP LOCKED spreads the work instead of serializing it behind one worker.
    expect(perWorker.filter((claims) => claims.length > 0).length).toBeGreaterThan(1);
    const { rows } = await pool.query(`
      select count(*) filter (where lease_owner is null)::int as unleased,
             count(*) filter (where row_version <> 1)::int as wrong_version,
             (select count(*)::int from keel.settlement_event) as events
      from settle.attempts`);
    // A claim writes no history of its own: its outcome will carry its time.
    expect(rows[0]).toEqual({ unleased: 0, wrong_version: 0, events: 0 });
    // Every row is leased by the worker that reported claiming it.
    const owners = await pool.query(`select receipt_id, lease_owner from settle.attempts`);
    const ownerOf = new Map(owners.rows.map((r) => [r.receipt_id as string, r.lease_owner as string]));
    for (const [i, claims] of perWorker.entries()) {
      for (const id of claims) expect(ownerOf.get(id)).toBe(`claimer-${i}`);
    }

    // Every lease lapses with no outcome; a second crowd of workers takes each row over exactly
    // once, and each lapsed claim is written once, as a claimed event at the time it was taken.
    const later = NOW + 600_000;
    const takeovers = await Promise.all(
      Array.from({ length: WORKERS }, (_, i) => runWorker(`taker-${i}`, 256, async () => {}, later)),
    );
    expect(new Set(takeovers.flat()).size).toBe(ROWS);
    expect(takeovers.flat()).toHaveLength(ROWS);
    const { rows: lapsed } = await pool.query(`
      select count(*)::int as events, count(distinct receipt_id)::int as receipts,
             count(*) filter (where kind = 'claimed' and at_ms = ${NOW} and attempt = 0)::int as at_first_claim
      from keel.settlement_event`);
    expect(lapsed[0]).toEqual({ events: ROWS, receipts: ROWS, at_first_claim: ROWS });
  });

  // Fewer rows: each outcome is its own commit, so this measures commit latency more than claiming.
  it(`${WORKERS} workers claiming and recording outcomes finish every row exactly once`, async () => {
    await pool.query('delete from settle.attempts');
    await pool.query('delete from keel.settlement_event');
    await queueDueRows('r-', RECORDED_ROWS);
    let conflicts = 0;
    const started = performance.now();
    const perWorker = await Promise.all(
      Array.from({ length: WORKERS }, (_, i) =>
        runWorker(`recorder-${i}`, 64, async (store, claims) => {
          for (const claim of claims) {
            const route = await store.recordClaimedOutcome(claim, { kind: 'Accepted' }, DEFAULT_RETRY_POLICY, NOW + 1);
            if (!route.ok) conflicts += 1;
          }
        }),
      ),
    );
    const elapsedMs = performance.now() - started;
    console.info(
      `[measure] claimDue + recordClaimedOutcome ${WORKERS} workers x ${RECORDED_ROWS} rows (batches of 64): ` +
        `${elapsedMs.toFixed(0)} ms`,
    );

    expect(conflicts).toBe(0);
    const all = perWorker.flat();
    expect(new Set(all).size).toBe(RECORDED_ROWS);
    expect(all).toHaveLength(RECORDED_ROWS);
    const { rows } = await pool.query(`
      select (select count(*)::int from settle.attempts) as left_behind,
             (select count(*)::int from keel.settlement_event where kind = 'finished') as finished,
             (select count(distinct receipt_id)::int from keel.settlement_event
             where kind = 'finished') as distinct_finished`);
    expect(rows[0]).toEqual({ left_behind: 0, finished: RECORDED_ROWS, distinct_finished: RECORDED_ROWS });
  }, 180_000);

  it('two workers racing claimReceipt for the same rows: exactly one wins each', async () => {
    await pool.query(
      `insert into settle.attempts (receipt_id, finalized_at, work_kind, attempts, next_visible_at_ms, row_version,
       updated_at_ms)
       select 'race-' || n, 1, 'pending_observation', 0, 0, 0, 1 from generate_series(1, 200) as n`,
    );
    const a = postgresSettlementStore(createDatabase(newPool(4)));
    const b = postgresSettlementStore(createDatabase(newPool(4)));
    const outcomes = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        Promise.all([
          a.claimReceipt(`race-${i + 1}`, 'a', NOW, 60_000),
          b.claimReceipt(`race-${i + 1}`, 'b', NOW, 60_000),
        ]),
      ),
    );
    for (const [first, second] of outcomes) {
      expect(first.ok && second.ok).toBe(true);
      const winners = [first, second].filter((r) => r.ok && r.value !== null);
      expect(winners).toHaveLength(1);
    }
    const { rows } = await pool.query(
      `select count(*)::int as n from settle.attempts where receipt_id like 'race-%' and row_version = 1`,
    );
    expect(rows[0].n).toBe(200);
  });
});
