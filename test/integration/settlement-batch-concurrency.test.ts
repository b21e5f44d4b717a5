import { describe, expect, it } from 'vitest';
import { postgresSettlementStore } from '../../lib/simulator/adapters/settlement-store';
import { createDatabase } from '../../lib/db/client';
import { demoOutcome } from '../../lib/demo/runtime/settlement-workers';
import type { RetryPolicy, SettlementAttemptClaim } from '../../lib/domain/settlement';
import { freshDatabase } from '../support/database';

const { pool, newPool } = await freshDatabase();
const ROWS = 3_000;
const WORKERS = 6;
const NOW = 1_800_000_000_000;
// Retries come due again at once, so receipts go round several times and some exhaust.
const POLICY: RetryPolicy = { maxRetries: 2, initialBackoffMs: 1, backoffMultiplier: 1, backoffCapMs: 1 };

type Store = ReturnType<typeof postgresSettlementStore>;

/**
 * One worker on a pool of its own. Batch workers record with the batch form and also
 * replay a rival's last batch (claims that are foreign to them); single workers record
 * one outcome at a time. The clock advances per round so retried rows come due again.
 */
async function runWorker(
  index: number,
  useBatch: boolean,
  rivals: SettlementAttemptClaim[][],
): Promise<{ committed: string[]; foreignAccepted: number }> {
  const store: Store = postgresSettlementStore(createDatabase(newPool(1)));
  const committed: string[] = [];
  let foreignAccepted = 0;
  for (let round = 0; ; round += 1) {
    const now = NOW + round * 10;
    const claimed = await store.claimDue(`worker-${index}`, now, 600_000, 50);
    if (!claimed.ok) throw new Error(`claim refused: ${claimed.error.kind}`);
    if (claimed.value.length === 0) {
      // Rows still leased by others or not yet due at this clock: look again a little later.
      const left = await pool.query<{ n: number }>('select count(*)::int as n from settle.attempts');
      if (left.rows[0]!.n === 0) return { committed, foreignAccepted };
      continue;
    }
    const items = claimed.value.map((claim) => ({ claim, outcome: demoOutcome(claim.attempts) }));
    if (useBatch) {
      const rival = rivals[(index + 1) % WORKERS];
      if (rival && rival.length > 0) {
        const replayed = await store.recordClaimedOutcomes(
          rival.map((claim) => ({ claim, outcome: { kind: 'Accepted' } })),
          POLICY,
          now + 1,
        );
        if (replayed.ok) foreignAccepted += replayed.value.filter((r) => r.ok).length;
      }
      const recorded = await store.recordClaimedOutcomes(items, POLICY, now + 1);
      if (!recorded.ok) throw new Error(`batch refused: ${recorded.error.kind} ${recorded.error.detail}`);
      recorded.value.forEach((r, i) => {
        if (r.ok) committed.push(`${items[i]!.claim.receiptId}@${items[i]!.claim.rowVersion}`);
      });
    } else {
      for (const item of items) {
        const r = await store.recordClaimedOutcome(item.claim, item.outcome, POLICY, now + 1);
        if (r.ok) committed.push(`${item.claim.receiptId}@${item.claim.rowVersion}`);
      }
    }
    rivals[index] = claimed.value;
  }
}

describe('batch and single workers at once', () => {
  it(`${WORKERS} workers over ${ROWS} receipts never settle a claim twice; each ends in one place`, async () => {
    await pool.query(
      `insert into settle.attempts (receipt_id, finalized_at, work_kind, attempts, next_visible_at_ms, row_version,
       updated_at_ms)
       select 'cc-' || lpad(n::text, 5, '0'), 1, 'pending_observation', 0, $1::bigint - (n % 97), 0, 1
       from generate_series(1, $2::int) as n`,
      [NOW, ROWS],
    );
    const rivals: SettlementAttemptClaim[][] = [];
    const results = await Promise.all(Array.from({ length: WORKERS }, (_, i) => runWorker(i, i % 2 === 0, rivals)));
    const committed = results.flatMap((r) => r.committed);

    // A claim (receipt at a row version) commits once, and a rival's stale batch never commits.
    expect(new Set(committed).size).toBe(committed.length);
    expect(results.reduce((sum, r) => sum + r.foreignAccepted, 0)).toBe(0);
    // Every committed outcome wrote exactly one history event, and nothing else did.
    const { rows: outcomes } = await pool.query<{ n: number }>(
      `select count(*)::int as n from keel.settlement_event where kind <> 'claimed'`,
    );
    expect(outcomes[0]!.n).toBe(committed.length);
    // Each receipt finished or dead-lettered exactly once.
    const { rows: ends } = await pool.query<{ receipt_id: string; n: number }>(
      `select receipt_id, count(*)::int as n from keel.settlement_event where kind in ('finished', 'dead_lettered')
       group by receipt_id`,
    );
    expect(ends).toHaveLength(ROWS);
    expect(ends.every((e) => e.n === 1)).toBe(true);

    // The one-place rule: every receipt in exactly one table, and receipt_place says which.
    const { rows: places } = await pool.query(`
      select
        (select count(*)::int from settle.attempts) as attempts,
        (select count(*)::int from settle.dead_letters) as dead,
        (select count(*)::int from settle.receipt_place) as places,
        (select count(*)::int from settle.receipt_place p join settle.dead_letters d using (receipt_id)
        where p.place = 'dead_lettered') as dead_tracked`);
    expect(places[0].attempts).toBe(0);
    expect(places[0].dead).toBeGreaterThan(0);
    expect(places[0].places).toBe(places[0].dead);
    expect(places[0].dead_tracked).toBe(places[0].dead);
    const finishedCount = ends.length - places[0].dead;
    expect(finishedCount).toBeGreaterThan(0);
  });
});
