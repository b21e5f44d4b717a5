import { describe, expect, it } from 'vitest';
import { postgresSettlementStore } from '../../lib/simulator/adapters/settlement-store';
import { createDatabase, createPool } from '../../lib/db/client';
import {
  DEFAULT_RETRY_POLICY,
  MAX_SETTLEMENT_CLAIM_BATCH,
  MAX_SETTLEMENT_LEASE_MS,
  deadLetterCanonicalJson,
  failureDetailSha256Hex,
  type SettlementAttemptClaim,
  type SettlementOutcome,
} from '../../lib/domain/settlement';
import { freshDatabase } from '../support/database';

const { pool, db, url, newPool } = await freshDatabase();
const store = postgresSettlementStore(db);
const NOW = 1_800_000_000_000;
const LEASE = 30_000;
let sequence = 0;
const nextReceipt = () => `store-${++sequence}`;

async function queued(
  receiptId: string,
  fields: { attempts?: number; nextVisibleAtMs?: number; lease?: [string, string, number] } = {},
) {
  const [owner, token, until] = fields.lease ?? [null, null, null];
  await pool.query(
    `insert into settle.attempts (receipt_id, finalized_at, work_kind, attempts, next_visible_at_ms, row_version,
       lease_owner, lease_token, lease_until_ms, updated_at_ms)
     values ($1, 41, $2, $3, $4, 7, $5, $6, $7, $8)`,
    [
      receiptId,
      fields.attempts ? 'retry_scheduled' : 'pending_observation',
      fields.attempts ?? 0,
      fields.nextVisibleAtMs ?? NOW - 1,
      owner,
      token,
      until,
      // A leased row's updated_at_ms is when its claim took it, a minute before the deadline here.
      until === null ? 1 : until - 60_000,
    ],
  );
}

async function attemptRow(receiptId: string) {
  const { rows } = await pool.query('select * from settle.attempts where receipt_id = $1', [receiptId]);
  return rows[0] ?? null;
}

async function events(receiptId: string) {
  const { rows } = await pool.query(
    'select kind, attempt, reason_code, at_ms, claimed_at_ms from keel.settlement_event where receipt_id = $1 ' +
      'order by id',
    [receiptId],
  );
  return rows.map((r) => [r.kind, r.attempt, r.reason_code, r.at_ms, r.claimed_at_ms]);
}

async function claimed(receiptId: string, attempts = 0): Promise<SettlementAttemptClaim> {
  await queued(receiptId, { attempts });
  const claim = await store.claimReceipt(receiptId, 'worker-1', NOW, LEASE);
  if (!claim.ok || !claim.value) throw new Error('setup claim failed');
  return claim.value;
}

describe('settlement store binding and enqueue', () => {
  it('returns the database binding from every handle', async () => {
    const first = await store.settlementStoreBinding();
    const other = await postgresSettlementStore(createDatabase(newPool(1))).settlementStoreBinding();
    const { rows } = await pool.query('select binding from settle.store_binding');
    expect(first.ok && first.value.length).toBe(32);
    expect(first).toEqual(other);
    expect(first.ok && first.value.equals(rows[0].binding)).toBe(true);
  });

  it('enqueues a pending observation, and refuses a receipt already queued or dead-lettered', async () => {
    const receipt = nextReceipt();
    expect(await store.enqueue({ receiptId: receipt, finalizedAt: 40, nowMs: NOW })).toEqual({
      ok: true,
      value: undefined,
    });
    expect(await attemptRow(receipt)).toMatchObject({
      work_kind: 'pending_observation',
      attempts: 0,
      next_visible_at_ms: NOW,
      lease_owner: null,
    });
    expect(await store.enqueue({ receiptId: receipt, finalizedAt: 40, nowMs: NOW })).toMatchObject({
      ok: false,
      error: { kind: 'Conflict' },
    });
    await pool.query(`insert into settle.dead_letters values ('dead-1', 1, 1, 'rpc', '{}', 1)`);
    // Inside a transaction the refusal must leave it usable (a savepoint, not an aborted transaction).
    await db.transaction(async (tx) => {
      const refused = await postgresSettlementStore(tx).enqueue({ receiptId: 'dead-1', finalizedAt: 1, nowMs: NOW });
      expect(refused).toMatchObject({ ok: false, error: { kind: 'Conflict', detail: 'the receipt is dead-lettered' } });
      expect(
        await postgresSettlementStore(tx).enqueue({ receiptId: 'after-refusal', finalizedAt: 1, nowMs: NOW }),
      ).toMatchObject({ ok: true });
    });
    expect(await attemptRow('after-refusal')).not.toBeNull();
    expect(await store.enqueue({ receiptId: '', finalizedAt: 1, nowMs: NOW })).toMatchObject({
      ok: false,
      error: { kind: 'InvalidRecord' },
    });
    expect(await store.enqueue({ receiptId: 'x', finalizedAt: -1, nowMs: NOW })).toMatchObject({
      ok: false,
      error: { kind: 'InvalidRecord' },
    });
  });

  it('reports a database failure as a Backend value, never a throw', async () => {
    const closed = createPool(url, 1); // not the harness's: it ends its own pools
    await closed.end();
    const broken = postgresSettlementStore(createDatabase(closed));
    expect(await broken.claimDue('worker', NOW, LEASE, 1)).toMatchObject({ ok: false, error: { kind: 'Backend' } });
    expect(await broken.settlementStoreBinding()).toMatchObject({ ok: false, error: { kind: 'Backend' } });
  });
});

describe('claim bounds', () => {
  const refusals: [string, string, number, number, string][] = [
    ['empty worker', '', LEASE, 1, 'WorkerIdLength'],
    ['129-byte worker', 'w'.repeat(129), LEASE, 1, 'WorkerIdLength'],
    ['65 two-byte characters', '\u00e9'.repeat(65), LEASE, 1, 'WorkerIdLength'],
    ['zero lease', 'w', 0, 1, 'LeaseDuration'],
    ['lease above a day', 'w', MAX_SETTLEMENT_LEASE_MS + 1, 1, 'LeaseDuration'],
    ['fractional lease', 'w', 1.5, 1, 'LeaseDuration'],
    ['zero batch', 'w', LEASE, 0, 'ClaimBatch'],
    ['batch above 1024', 'w', LEASE, MAX_SETTLEMENT_CLAIM_BATCH + 1, 'ClaimBatch'],
  ];
  it.each(refusals)('refuses %s', async (_name, worker, lease, limit, kind) => {
    expect(await store.claimDue(worker, NOW, lease, limit)).toEqual({ ok: false, error: { kind } });
    if (limit === 1)
      expect(await store.claimReceipt('any', worker, NOW, lease)).toEqual({ ok: false, error: { kind } });
  });

  it('accepts the bounds themselves and refuses a time outside 0..2^53', async () => {
    expect(
      await store.claimDue('w'.repeat(128), NOW, MAX_SETTLEMENT_LEASE_MS, MAX_SETTLEMENT_CLAIM_BATCH),
    ).toMatchObject({ ok: true });
    expect(await store.claimDue('\u00e9'.repeat(64), NOW, 1, 1)).toMatchObject({ ok: true });
    expect(await store.claimDue('w', -1, LEASE, 1)).toMatchObject({ ok: false, error: { kind: 'InvalidRecord' } });
    expect(await store.claimDue('w', Number.MAX_SAFE_INTEGER, LEASE, 1)).toMatchObject({
      ok: false,
      error: { kind: 'InvalidRecord' },
    });
  });
});

describe('claiming', () => {
  it('claims a due row with a fresh lease and writes no event: its outcome will carry the claim', async () => {
    const receipt = nextReceipt();
    await queued(receipt);
    const result = await store.claimReceipt(receipt, 'worker-1', NOW, LEASE);
    expect(result.ok).toBe(true);
    const claim = result.ok ? result.value! : null;
    expect(claim).toMatchObject({
      receiptId: receipt,
      finalizedAt: 41,
      attempts: 0,
      rowVersion: 8,
      leaseOwner: 'worker-1',
      leaseUntilMs: NOW + LEASE,
    });
    expect(claim!.leaseToken).toMatch(/^[0-9a-f-]{36}$/);
    const row = await attemptRow(receipt);
    expect([row.row_version, row.lease_owner, row.lease_token, row.lease_until_ms]).toEqual([
      8,
      'worker-1',
      claim!.leaseToken,
      NOW + LEASE,
    ]);
    expect(await events(receipt)).toEqual([]);
    expect(row.updated_at_ms).toBe(NOW);
  });

  it('returns null when the row is absent, not yet due, or held by a live lease', async () => {
    const later = nextReceipt();
    const held = nextReceipt();
    await queued(later, { nextVisibleAtMs: NOW + 1 });
    await queued(held, { lease: ['other', 'secret', NOW + 1] });
    for (const receipt of ['absent', later, held]) {
      expect(await store.claimReceipt(receipt, 'worker-1', NOW, LEASE)).toEqual({ ok: true, value: null });
    }
    expect((await attemptRow(held)).lease_token).toBe('secret');
    expect(await events(held)).toEqual([]);
  });

  it('takes over an expired lease with a new token and a higher row version', async () => {
    const receipt = nextReceipt();
    await queued(receipt, { lease: ['gone', 'old-token', NOW] });
    const result = await store.claimReceipt(receipt, 'worker-2', NOW, LEASE);
    expect(result.ok && result.value).toMatchObject({ leaseOwner: 'worker-2', rowVersion: 8 });
    expect(result.ok && result.value!.leaseToken).not.toBe('old-token');
    // The lapsed claim ended with no outcome: written once, at the time it was taken.
    expect(await events(receipt)).toEqual([['claimed', 0, null, NOW - 60_000, null]]);
    if (!result.ok || !result.value) throw new Error('takeover failed');
    await store.recordClaimedOutcome(result.value, { kind: 'Accepted' }, DEFAULT_RETRY_POLICY, NOW + 1);
    expect(await events(receipt)).toEqual([
      ['claimed', 0, null, NOW - 60_000, null],
      ['finished', 1, null, NOW + 1, NOW],
    ]);
  });

  it('claims due rows in (next_visible_at_ms, receipt_id) order up to the limit', async () => {
    await pool.query('delete from settle.attempts');
    await queued('due-b', { nextVisibleAtMs: NOW - 50 });
    await queued('due-a', { nextVisibleAtMs: NOW - 50 });
    await queued('due-c', { nextVisibleAtMs: NOW - 100 });
    await queued('due-later', { nextVisibleAtMs: NOW + 10 });
    await queued('due-held', { nextVisibleAtMs: NOW - 500, lease: ['x', 'y', NOW + 5] });
    const first = await store.claimDue('worker-1', NOW, LEASE, 2);
    expect(first.ok && first.value.map((c) => c.receiptId)).toEqual(['due-c', 'due-a']);
    const second = await store.claimDue('worker-1', NOW, LEASE, 10);
    expect(second.ok && second.value.map((c) => c.receiptId)).toEqual(['due-b']);
    const tokens = new Set(
      [...(first.ok ? first.value : []), ...(second.ok ? second.value : [])].map((c) => c.leaseToken),
    );
    expect(tokens.size).toBe(3);
  });

  it('keeps one generic plan per claim size and per batch shape instead of planning every call', async () => {
    // Enough analyzed rows that a generic plan guessing at an unknown limit would cost far
    // more than a custom one (the claim would then be planned again on every call).
    await pool.query('delete from settle.attempts');
    await pool.query(
      `insert into settle.attempts (receipt_id, finalized_at, work_kind, attempts, next_visible_at_ms, row_version,
         updated_at_ms)
       select 'plan-' || n, 41, 'pending_observation', 0, $1::bigint - n, 0, 1 from generate_series(1, 20000) n`,
      [NOW],
    );
    await pool.query('analyze settle.attempts');
    const single = newPool(1);
    const worker = postgresSettlementStore(createDatabase(single));
    for (let call = 0; call < 8; call += 1) {
      const claims = await worker.claimDue('worker-plan', NOW, LEASE, 7);
      if (!claims.ok) throw new Error('claim refused');
      const items = claims.value.map((claim) => ({ claim, outcome: { kind: 'Accepted' as const } }));
      const recorded = await worker.recordClaimedOutcomes(items, DEFAULT_RETRY_POLICY, NOW);
      expect(recorded.ok && recorded.value.every((item) => item.ok)).toBe(true);
    }
    const { rows } = await single.query(
      `select name, generic_plans from pg_prepared_statements
       where name like 'keel_settlement_claim_due%' or name like 'keel_settlement_batch%' order by name`,
    );
    // Postgres plans the first five calls, then keeps the generic plan when it costs no more.
    expect(rows.map((row) => [row.name, Number(row.generic_plans) >= 3])).toEqual([
      ['keel_settlement_batch_r', true],
      ['keel_settlement_claim_due_7', true],
    ]);
  });
});

describe('recording claimed outcomes', () => {
  const detail = failureDetailSha256Hex('ledger timed out');

  it('deletes the row for Accepted and Skipped', async () => {
    const accepted = await claimed(nextReceipt());
    const skipped = await claimed(nextReceipt());
    expect(await store.recordClaimedOutcome(accepted, { kind: 'Accepted' }, DEFAULT_RETRY_POLICY, NOW + 1)).toEqual({
      ok: true,
      value: { kind: 'NoAction' },
    });
    expect(
      await store.recordClaimedOutcome(
        skipped,
        { kind: 'Skipped', reason: 'zero_charge' },
        DEFAULT_RETRY_POLICY,
        NOW + 1,
      ),
    ).toEqual({ ok: true, value: { kind: 'NoAction' } });
    expect(await attemptRow(accepted.receiptId)).toBeNull();
    expect(await events(accepted.receiptId)).toEqual([['finished', 1, null, NOW + 1, NOW]]);
    expect(await events(skipped.receiptId)).toEqual([['finished', 1, 'zero_charge', NOW + 1, NOW]]);
  });

  it('schedules a retry with backoff, clears the lease and keeps the reason digest', async () => {
    const claim = await claimed(nextReceipt(), 2);
    const route = await store.recordClaimedOutcome(
      claim,
      { kind: 'Retryable', code: 'rpc', detailSha256: detail },
      DEFAULT_RETRY_POLICY,
      NOW + 5,
    );
    expect(route).toEqual({ ok: true, value: { kind: 'RetryScheduled', attempt: 3, nextVisibleAtMs: NOW + 5 + 1000 } });
    const row = await attemptRow(claim.receiptId);
    expect(row).toMatchObject({
      work_kind: 'retry_scheduled',
      attempts: 3,
      row_version: 9,
      lease_owner: null,
      lease_token: null,
      lease_until_ms: null,
      reason_code: 'rpc',
    });
    expect(row.reason_detail_sha256.toString('hex')).toBe(detail);
    expect(await events(claim.receiptId)).toEqual([['retry_scheduled', 3, 'rpc', NOW + 5, NOW]]);
  });

  it('dead-letters Permanent, non-retryable and exhausted failures atomically with the canonical JSON', async () => {
    const cases: [SettlementOutcome, number][] = [
      [{ kind: 'Permanent', code: 'rpc', detailSha256: detail }, 0],
      [{ kind: 'Retryable', code: 'invalid_input', detailSha256: detail }, 1],
      [{ kind: 'Retryable', code: 'backend', detailSha256: detail }, DEFAULT_RETRY_POLICY.maxRetries],
    ];
    for (const [outcome, attempts] of cases) {
      const claim = await claimed(nextReceipt(), attempts);
      const route = await store.recordClaimedOutcome(claim, outcome, DEFAULT_RETRY_POLICY, NOW + 9);
      expect(route).toEqual({ ok: true, value: { kind: 'DeadLettered', attempts: attempts + 1 } });
      const code = outcome.kind === 'Accepted' || outcome.kind === 'Skipped' ? 'rpc' : outcome.code;
      const json = deadLetterCanonicalJson({
        receiptId: claim.receiptId,
        finalizedAt: 41,
        attempts: attempts + 1,
        reasonCode: code,
        detailSha256Hex: detail,
      });
      const { rows } = await pool.query(
        'select finalized_at, attempts, reason, canonical_json, recorded_at_ms from settle.dead_letters ' +
          'where receipt_id = $1',
        [claim.receiptId],
      );
      expect(rows).toEqual([
        {
          finalized_at: 41,
          attempts: attempts + 1,
          reason: code,
          canonical_json: json.ok && json.value,
          recorded_at_ms: NOW + 9,
        },
      ]);
      expect(await attemptRow(claim.receiptId)).toBeNull();
      expect(await events(claim.receiptId)).toEqual([['dead_lettered', attempts + 1, code, NOW + 9, NOW]]);
    }
  });

  it('commits only for the exact claim: any differing field is a Conflict and changes nothing', async () => {
    const claim = await claimed(nextReceipt());
    const before = await attemptRow(claim.receiptId);
    const altered: Partial<SettlementAttemptClaim>[] = [
      { finalizedAt: 40 },
      { attempts: 1 },
      { rowVersion: claim.rowVersion - 1 },
      { leaseOwner: 'worker-2' },
      { leaseToken: 'guessed' },
      { leaseUntilMs: claim.leaseUntilMs + 1 },
    ];
    for (const change of altered) {
      const result = await store.recordClaimedOutcome(
        { ...claim, ...change },
        { kind: 'Accepted' },
        DEFAULT_RETRY_POLICY,
        NOW + 1,
      );
      expect(result, JSON.stringify(change)).toMatchObject({ ok: false, error: { kind: 'Conflict' } });
    }
    expect(await attemptRow(claim.receiptId)).toEqual(before);
    expect(await store.recordClaimedOutcome(claim, { kind: 'Accepted' }, DEFAULT_RETRY_POLICY, NOW + 1)).toMatchObject({
      ok: true,
    });
  });

  it('refuses an expired claim, and a stale claim after another worker took the row over', async () => {
    const claim = await claimed(nextReceipt());
    // The lease is exclusive: at lease_until_ms it is already over.
    expect(
      await store.recordClaimedOutcome(claim, { kind: 'Accepted' }, DEFAULT_RETRY_POLICY, claim.leaseUntilMs),
    ).toMatchObject({ ok: false, error: { kind: 'Conflict' } });
    const takeover = await store.claimReceipt(claim.receiptId, 'worker-2', claim.leaseUntilMs, LEASE);
    expect(takeover.ok && takeover.value?.rowVersion).toBe(claim.rowVersion + 1);
    const permanent: SettlementOutcome = { kind: 'Permanent', code: 'verification', detailSha256: detail };
    expect(
      await store.recordClaimedOutcome(claim, permanent, DEFAULT_RETRY_POLICY, claim.leaseUntilMs - 1),
    ).toMatchObject({ ok: false, error: { kind: 'Conflict' } });
    expect((await attemptRow(claim.receiptId)).lease_owner).toBe('worker-2');
    const fresh = takeover.ok ? takeover.value! : claim;
    expect(
      await store.recordClaimedOutcome(fresh, { kind: 'Accepted' }, DEFAULT_RETRY_POLICY, fresh.leaseUntilMs - 1),
    ).toEqual({ ok: true, value: { kind: 'NoAction' } });
  });

  it('returns DeadLettered again for the same outcome once committed; anything else is a Conflict', async () => {
    const claim = await claimed(nextReceipt(), 1);
    const outcome: SettlementOutcome = { kind: 'Permanent', code: 'signature', detailSha256: detail };
    const first = await store.recordClaimedOutcome(claim, outcome, DEFAULT_RETRY_POLICY, NOW + 3);
    expect(first).toEqual({ ok: true, value: { kind: 'DeadLettered', attempts: 2 } });
    expect(await store.recordClaimedOutcome(claim, outcome, DEFAULT_RETRY_POLICY, NOW + 4)).toEqual(first);
    const conflicts: SettlementOutcome[] = [
      { kind: 'Permanent', code: 'verification', detailSha256: detail },
      { kind: 'Permanent', code: 'signature', detailSha256: failureDetailSha256Hex('other') },
      { kind: 'Accepted' },
    ];
    for (const other of conflicts) {
      expect(await store.recordClaimedOutcome(claim, other, DEFAULT_RETRY_POLICY, NOW + 4)).toMatchObject({
        ok: false,
        error: { kind: 'Conflict' },
      });
    }
    expect(
      await store.recordClaimedOutcome({ ...claim, attempts: 0 }, outcome, DEFAULT_RETRY_POLICY, NOW + 4),
    ).toMatchObject({ ok: false, error: { kind: 'Conflict' } });
    const deadLetterEvents = (await events(claim.receiptId)).filter(([kind]) => kind === 'dead_lettered');
    expect(deadLetterEvents).toHaveLength(1);
  });

  it('refuses invalid records before touching the row', async () => {
    const claim = await claimed(nextReceipt());
    const invalid: [SettlementAttemptClaim, SettlementOutcome, typeof DEFAULT_RETRY_POLICY, number][] = [
      [claim, { kind: 'Accepted' }, { ...DEFAULT_RETRY_POLICY, backoffCapMs: 0 }, NOW],
      [claim, { kind: 'Permanent', code: 'nope' as 'rpc' }, DEFAULT_RETRY_POLICY, NOW],
      [claim, { kind: 'Retryable', code: 'rpc', detailSha256: 'xyz' }, DEFAULT_RETRY_POLICY, NOW],
      [claim, { kind: 'Skipped', reason: 'bored' as 'denied' }, DEFAULT_RETRY_POLICY, NOW],
      [claim, { kind: 'Accepted' }, DEFAULT_RETRY_POLICY, -5],
      [{ ...claim, receiptId: '' }, { kind: 'Accepted' }, DEFAULT_RETRY_POLICY, NOW],
      [{ ...claim, rowVersion: 1.5 }, { kind: 'Accepted' }, DEFAULT_RETRY_POLICY, NOW],
    ];
    for (const [c, outcome, policy, at] of invalid) {
      expect(await store.recordClaimedOutcome(c, outcome, policy, at)).toMatchObject({
        ok: false,
        error: { kind: 'InvalidRecord' },
      });
    }
    expect((await attemptRow(claim.receiptId)).lease_token).toBe(claim.leaseToken);
  });
});
