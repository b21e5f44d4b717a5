import { sql } from 'drizzle-orm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ArrayParam } from '../../lib/simulator/adapters/named-statement';
import { postgresSettlementStore } from '../../lib/simulator/adapters/settlement-store';
import {
  FAILURE_CODES,
  SKIP_REASONS,
  failureDetailSha256Hex,
  type RetryPolicy,
  type SettlementAttemptClaim,
  type SettlementOutcome,
} from '../../lib/domain/settlement';
import { freshDatabase } from '../support/database';

const { pool, db } = await freshDatabase();
const store = postgresSettlementStore(db);
const NOW = 1_800_000_000_000;
const LEASE = 30_000;

async function queue(receiptIds: string[], attempts = 0): Promise<void> {
  await pool.query(
    `insert into settle.attempts (receipt_id, finalized_at, work_kind, attempts, next_visible_at_ms, row_version,
     updated_at_ms)
     select r, 41, case when $2::int > 0 then 'retry_scheduled'
     else 'pending_observation' end, $2::int, $3::bigint, 0, 1
     from unnest($1::text[]) as r`,
    [receiptIds, attempts, NOW - 1],
  );
}

async function claim(receiptId: string, worker = 'worker-1', nowMs = NOW): Promise<SettlementAttemptClaim> {
  const claimed = await store.claimReceipt(receiptId, worker, nowMs, LEASE);
  if (!claimed.ok || !claimed.value) throw new Error(`setup claim of ${receiptId} failed`);
  return claimed.value;
}

/** Everything a settlement leaves behind for one receipt, with the receipt id and lease token taken out. */
async function footprint(receiptId: string) {
  const attempt = await pool.query(
    `select work_kind, attempts, next_visible_at_ms, row_version, lease_owner, lease_until_ms, reason_code,
            encode(reason_detail_sha256, 'hex') as sha, updated_at_ms
     from settle.attempts where receipt_id = $1`,
    [receiptId],
  );
  const dead = await pool.query(
    `select finalized_at, attempts, reason, replace(canonical_json, $1, '<receipt>') as json, recorded_at_ms
     from settle.dead_letters where receipt_id = $1`,
    [receiptId],
  );
  const events = await pool.query(
    'select kind, attempt, reason_code, at_ms, claimed_at_ms from keel.settlement_event where receipt_id = $1 ' +
      'order by id',
    [receiptId],
  );
  const place = await pool.query('select place from settle.receipt_place where receipt_id = $1', [receiptId]);
  return { attempt: attempt.rows, dead: dead.rows, events: events.rows, place: place.rows };
}

const POLICY: RetryPolicy = { maxRetries: 3, initialBackoffMs: 250, backoffMultiplier: 2, backoffCapMs: 60_000 };

const outcomeArbitrary: fc.Arbitrary<SettlementOutcome> = fc.oneof(
  fc.constant<SettlementOutcome>({ kind: 'Accepted' }),
  fc.constantFrom(...SKIP_REASONS).map((reason): SettlementOutcome => ({ kind: 'Skipped', reason })),
  fc.tuple(fc.constantFrom(...FAILURE_CODES), fc.string({ maxLength: 8 })).map(
    ([code, detail]): SettlementOutcome => ({
      kind: 'Retryable',
      code,
      detailSha256: failureDetailSha256Hex(detail),
    }),
  ),
  fc.constantFrom('rpc', 'backend').map((code): SettlementOutcome => ({ kind: 'Retryable', code })),
  fc.tuple(fc.constantFrom(...FAILURE_CODES), fc.string({ maxLength: 8 })).map(
    ([code, detail]): SettlementOutcome => ({
      kind: 'Permanent',
      code,
      detailSha256: failureDetailSha256Hex(detail),
    }),
  ),
);

describe('recordClaimedOutcomes (the batch form)', () => {
  it('commits a batch around a stale and a foreign claim, refusing only those two', async () => {
    const ids = ['mix-1', 'mix-2', 'mix-3', 'mix-4', 'mix-stale', 'mix-foreign'];
    await queue(ids);
    const claims = await Promise.all(ids.map((id) => claim(id)));
    // The stale claim's lease ran out and worker-2 took the row over.
    const takeover = await claim('mix-stale', 'worker-2', NOW + LEASE);
    const foreign: SettlementAttemptClaim = { ...claims[5]!, leaseOwner: 'intruder', leaseToken: 'forged-token' };
    const outcomes: SettlementOutcome[] = [
      { kind: 'Accepted' },
      { kind: 'Skipped', reason: 'zero_charge' },
      { kind: 'Retryable', code: 'rpc', detailSha256: failureDetailSha256Hex('timeout') },
      { kind: 'Permanent', code: 'invalid_action_hash', detailSha256: failureDetailSha256Hex('bad hash') },
      { kind: 'Accepted' },
      { kind: 'Accepted' },
    ];
    const items = [...claims.slice(0, 5), foreign].map((c, i) => ({ claim: c, outcome: outcomes[i]! }));
    const recorded = await store.recordClaimedOutcomes(items, POLICY, NOW + 10);
    expect(recorded.ok).toBe(true);
    if (!recorded.ok) return;
    expect(recorded.value.map((r) => (r.ok ? r.value : r.error.kind))).toEqual([
      { kind: 'NoAction' },
      { kind: 'NoAction' },
      { kind: 'RetryScheduled', attempt: 1, nextVisibleAtMs: NOW + 10 + 250 },
      { kind: 'DeadLettered', attempts: 1 },
      'Conflict',
      'Conflict',
    ]);
    // The refused rows are exactly as their current holders left them.
    const stale = await pool.query(
      'select lease_owner, lease_token, row_version from settle.attempts where receipt_id = $1',
      ['mix-stale'],
    );
    expect(stale.rows).toEqual([
      { lease_owner: 'worker-2', lease_token: takeover.leaseToken, row_version: takeover.rowVersion },
    ]);
    const held = await pool.query('select lease_owner, lease_token from settle.attempts where receipt_id = $1', [
      'mix-foreign',
    ]);
    expect(held.rows).toEqual([{ lease_owner: 'worker-1', lease_token: claims[5]!.leaseToken }]);
    // One event per outcome, carrying its claim's time; the stale claim's lapse was written at the takeover.
    expect((await footprint('mix-1')).events).toEqual([
      { kind: 'finished', attempt: 1, reason_code: null, at_ms: NOW + 10, claimed_at_ms: NOW },
    ]);
    expect((await footprint('mix-2')).events).toEqual([
      { kind: 'finished', attempt: 1, reason_code: 'zero_charge', at_ms: NOW + 10, claimed_at_ms: NOW },
    ]);
    expect((await footprint('mix-3')).events).toEqual([
      { kind: 'retry_scheduled', attempt: 1, reason_code: 'rpc', at_ms: NOW + 10, claimed_at_ms: NOW },
    ]);
    expect((await footprint('mix-stale')).events).toEqual([
      { kind: 'claimed', attempt: 0, reason_code: null, at_ms: NOW, claimed_at_ms: null },
    ]);
    expect((await footprint('mix-3')).place).toEqual([{ place: 'queued' }]);
    const dead = await footprint('mix-4');
    expect(dead.place).toEqual([{ place: 'dead_lettered' }]);
    expect(dead.attempt).toEqual([]);
    expect(dead.events).toEqual([
      { kind: 'dead_lettered', attempt: 1, reason_code: 'invalid_action_hash', at_ms: NOW + 10, claimed_at_ms: NOW },
    ]);
    // Recording the committed dead letter again reports it landed, as the single form does.
    const again = await store.recordClaimedOutcomes([items[3]!], POLICY, NOW + 20);
    expect(again).toEqual({ ok: true, value: [{ ok: true, value: { kind: 'DeadLettered', attempts: 1 } }] });
  });

  it('refuses a receipt named twice and an expired lease, and records nothing for an empty batch', async () => {
    await queue(['dup-1', 'late-1']);
    const dup = await claim('dup-1');
    const late = await claim('late-1');
    const recorded = await store.recordClaimedOutcomes(
      [
        { claim: dup, outcome: { kind: 'Accepted' } },
        { claim: dup, outcome: { kind: 'Accepted' } },
      ],
      POLICY,
      NOW + 1,
    );
    expect(recorded.ok && recorded.value.map((r) => r.ok)).toEqual([true, false]);
    const expired = await store.recordClaimedOutcomes(
      [{ claim: late, outcome: { kind: 'Accepted' } }],
      POLICY,
      late.leaseUntilMs,
    );
    expect(expired.ok && expired.value[0]!.ok).toBe(false);
    expect((await footprint('late-1')).attempt).toHaveLength(1);
    expect(await store.recordClaimedOutcomes([], POLICY, NOW)).toEqual({ ok: true, value: [] });
  });

  it('names the dead-letter table only when the batch dead-letters: no trigger, no NOTIFY otherwise', async () => {
    await queue(['quiet-1', 'quiet-2']);
    const claims = [await claim('quiet-1'), await claim('quiet-2')];
    // Trigger function calls of this transaction alone (pg_stat_xact_user_functions).
    const calls = await db.transaction(async (tx) => {
      await tx.execute(sql`set local track_functions = 'pl'`);
      const recorded = await postgresSettlementStore(tx).recordClaimedOutcomes(
        claims.map((c) => ({ claim: c, outcome: { kind: 'Accepted' } as const })),
        POLICY,
        NOW + 1,
      );
      expect(recorded.ok && recorded.value.every((r) => r.ok)).toBe(true);
      const { rows } = await tx.execute<{ name: string; calls: number }>(
        sql`select schemaname || '.' || funcname as name, calls::int as calls from pg_stat_xact_user_functions
            order by 1`,
      );
      return rows;
    });
    // One statement-level call of the one-place rule for the delete; keel.notify_change never runs.
    expect(calls).toEqual([{ name: 'settle.track_receipt_places', calls: 1 }]);
  });

  it('routes every outcome exactly as the single form does (twin rows, random outcomes)', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({ attempts: fc.integer({ min: 0, max: 4 }), outcome: outcomeArbitrary, stale: fc.boolean() }),
          { minLength: 1, maxLength: 12 },
        ),
        async (cases) => {
          run += 1;
          const singles = cases.map((_, i) => `p${run}-${i}-single`);
          const batched = cases.map((_, i) => `p${run}-${i}-batch`);
          for (const [i, c] of cases.entries()) await queue([singles[i]!, batched[i]!], c.attempts);
          const singleClaims = await Promise.all(singles.map((id) => claim(id)));
          const batchClaims = await Promise.all(batched.map((id) => claim(id)));
          // A stale claim: the row moved on (as another worker's claim would) after this one was taken.
          const staleIds = cases.flatMap((c, i) => (c.stale ? [singles[i]!, batched[i]!] : []));
          await pool.query('update settle.attempts set row_version = row_version + 1 where receipt_id = any($1)', [
            staleIds,
          ]);
          const observed = NOW + 5;
          const single = [];
          for (const [i, c] of cases.entries())
            single.push(await store.recordClaimedOutcome(singleClaims[i]!, c.outcome, POLICY, observed));
          const batch = await store.recordClaimedOutcomes(
            cases.map((c, i) => ({ claim: batchClaims[i]!, outcome: c.outcome })),
            POLICY,
            observed,
          );
          expect(batch.ok).toBe(true);
          if (!batch.ok) return;
          expect(batch.value.map((r) => (r.ok ? r.value : r.error.kind))).toEqual(
            single.map((r) => (r.ok ? r.value : r.error.kind)),
          );
          for (const i of cases.keys()) {
            const [a, b] = [await footprint(singles[i]!), await footprint(batched[i]!)];
            expect(b).toEqual(a);
          }
        },
      ),
      { numRuns: 30 },
    );
  });
});

describe('the batch parameters', () => {
  const arrayParam = (values: (string | number | null)[]) => {
    const param = new ArrayParam();
    for (const value of values) param.push(value);
    return param.text();
  };

  it('are read back by PostgreSQL as the values they were built from, whatever the text holds', async () => {
    const text = fc.oneof(
      fc.string({ unit: 'grapheme', maxLength: 12 }).filter((s) => !s.includes('\u0000')),
      fc.constantFrom('', 'NULL', 'null', ' padded ', 'a,b', '{x}', 'say "hi"', 'back\\slash', '\\"', 'rcpt 1/%2F'),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.option(text, { nil: null }), { maxLength: 20 }),
        fc.array(fc.option(fc.maxSafeInteger(), { nil: null }), { maxLength: 20 }),
        async (texts, numbers) => {
          const { rows } = await pool.query<{ texts: (string | null)[]; numbers: (string | null)[] }>(
            'select $1::text[] as texts, $2::bigint[]::text[] as numbers',
            [arrayParam(texts), arrayParam(numbers)],
          );
          // A column null on every row is sent empty: unnest pads it back with nulls.
          const sent = <T>(values: (T | null)[]) => (values.every((v) => v === null) ? [] : values);
          expect(rows[0]!.texts).toEqual(sent(texts));
          expect(rows[0]!.numbers).toEqual(sent(numbers).map((n) => (n === null ? null : String(n))));
        },
      ),
      { numRuns: 200 },
    );
  });
});
