import { describe, expect, it } from 'vitest';
import { deadLetterActionSchema } from '../../app/actions/settlement-schemas';
import { postgresSettlementUnitOfWork } from '../../lib/adapters/settlement-replay';
import { postgresSettlementStore } from '../../lib/simulator/adapters/settlement-store';
import { createDatabase } from '../../lib/db/client';
import type { Actor } from '../../lib/domain/actor';
import { mapOk } from '../../lib/domain/result';
import {
  DEFAULT_RETRY_POLICY,
  deadLetterCanonicalJson,
  failureDetailSha256Hex,
  type FailureCode,
} from '../../lib/domain/settlement';
import { action } from '../../lib/server/action';
import { discardDeadLetter, replayDeadLetter, requeueSettlement } from '../../lib/services/dead-letter-actions';
import { actionDepsFor } from '../support/actions';
import { freshDatabase } from '../support/database';

const { pool, db, newPool } = await freshDatabase();
const deps = { unitOfWork: postgresSettlementUnitOfWork(db) };
const support: Actor = { id: 'u-support', login: 'support', name: 'Sam Support', role: 'support' };
const viewer: Actor = { id: 'u-viewer', login: 'viewer', name: 'Vera Viewer', role: 'viewer' };
const operator: Actor = { id: 'u-operator', login: 'operator', name: 'Otto Operator', role: 'operator' };
/** The replay and discard actions' own wiring (app/actions/settlements.ts), on this database, as `actor`. */
const throughAction = (name: 'settlement.replay' | 'settlement.discard', actor: Actor) =>
  action(
    deadLetterActionSchema,
    name,
    async (who, input) =>
      name === 'settlement.replay'
        ? mapOk(await replayDeadLetter(deps, who, input), (r) => r.receiptId)
        : mapOk(await discardDeadLetter(deps, who, input), (d) => d.receiptId),
    { deps: actionDepsFor(db, actor) },
  );
const invalid = (field: string) => ({ ok: false, code: 'INVALID_INPUT', fieldErrors: { [field]: expect.any(Array) } });
let sequence = 0;
const nextId = (kind: string) => `${kind}-${++sequence}`;

async function deadLetter(
  receiptId: string,
  reason: FailureCode = 'rpc',
  attempts = 6,
  recordedAtMs = 1_700_000_000_000,
) {
  const json = deadLetterCanonicalJson({
    receiptId,
    finalizedAt: 11,
    attempts,
    reasonCode: reason,
    detailSha256Hex: failureDetailSha256Hex('x'),
  });
  if (!json.ok) throw new Error(json.error.detail);
  await pool.query('insert into settle.dead_letters values ($1, 11, $2, $3, $4, $5)', [
    receiptId,
    attempts,
    reason,
    json.value,
    recordedAtMs,
  ]);
  return json.value;
}

const serverNowMs = async () =>
  Number((await pool.query(`select (extract(epoch from clock_timestamp()) * 1000)::bigint as ms`)).rows[0].ms);

async function stateOf(receiptId: string) {
  const q = (text: string) => pool.query(text, [receiptId]).then((r) => r.rows);
  return {
    attempts: await q(
      'select work_kind, attempts, next_visible_at_ms, row_version, lease_owner from settle.attempts ' +
        'where receipt_id = $1',
    ),
    deadLetters: await q('select attempts, reason from settle.dead_letters where receipt_id = $1'),
    replays: await q(
      'select operation_id, prior_attempts, prior_reason, actor_login, note from keel.settlement_replay ' +
        'where receipt_id = $1',
    ),
    events: (await q('select kind from keel.settlement_event where receipt_id = $1 order by id')).map((r) => r.kind),
    audit: await q(
      `select action, outcome, code, operation_id, reason from keel.audit_event where target_id = $1 order by id`,
    ),
  };
}

describe('replaying one dead letter', () => {
  it('queues a fresh attempt, records the replay and audits it, in one transaction', async () => {
    const receipt = nextId('r');
    const json = await deadLetter(receipt, 'backend', 6);
    const before = await serverNowMs();
    // The input as the action's schema hands it over: the note trimmed.
    const input = deadLetterActionSchema.parse({ receiptId: receipt, note: '  ledger is back  ', operationId: 'op-1' });
    const result = await replayDeadLetter(deps, support, input);
    expect(result).toMatchObject({
      ok: true,
      value: {
        receiptId: receipt,
        operationId: 'op-1',
        priorAttempts: 6,
        priorReason: 'backend',
        actorLogin: 'support',
        note: 'ledger is back',
        bulkJob: null,
      },
    });
    const state = await stateOf(receipt);
    expect(state.deadLetters).toEqual([]);
    expect(state.attempts).toEqual([
      {
        work_kind: 'pending_observation',
        attempts: 0,
        next_visible_at_ms: expect.any(Number),
        row_version: 0,
        lease_owner: null,
      },
    ]);
    expect(state.attempts[0].next_visible_at_ms).toBeGreaterThanOrEqual(before);
    expect(state.attempts[0].next_visible_at_ms).toBeLessThanOrEqual(await serverNowMs());
    expect(state.replays).toEqual([
      {
        operation_id: 'op-1',
        prior_attempts: 6,
        prior_reason: 'backend',
        actor_login: 'support',
        note: 'ledger is back',
      },
    ]);
    expect(state.events).toEqual(['replayed']);
    expect(state.audit).toEqual([
      { action: 'settlement.replay', outcome: 'APPLIED', code: null, operation_id: 'op-1', reason: 'ledger is back' },
    ]);
    const audit = await pool.query(`select actor_role, before from keel.audit_event where operation_id = 'op-1'`);
    expect(audit.rows[0]).toMatchObject({
      actor_role: 'support',
      before: { canonicalJson: json, attempts: 6, reason: 'backend' },
    });
  });

  it('is idempotent by operation id: the same id twice, even at once, replays once, answers the first', async () => {
    const receipt = nextId('r');
    await deadLetter(receipt);
    const input = { receiptId: receipt, note: 'retry', operationId: 'op-twice' };
    const first = await replayDeadLetter(deps, support, input);
    const again = await replayDeadLetter(deps, support, input);
    expect(again).toEqual(first);

    const concurrent = nextId('r');
    await deadLetter(concurrent);
    const clients = Array.from({ length: 6 }, () => ({
      unitOfWork: postgresSettlementUnitOfWork(createDatabase(newPool(2))),
    }));
    const results = await Promise.all(
      clients.map((t) => replayDeadLetter(t, support, { receiptId: concurrent, note: 'n', operationId: 'op-burst' })),
    );
    expect(results.every((r) => r.ok)).toBe(true);
    for (const r of results) expect(r).toEqual(results[0]);
    const state = await stateOf(concurrent);
    expect(state.replays).toHaveLength(1);
    expect(state.events).toEqual(['replayed']);
    expect(state.audit.filter((a) => a.outcome === 'APPLIED')).toHaveLength(1);
  });

  it('replays a receipt once when different submits race: the others are CONFLICT', async () => {
    const receipt = nextId('r');
    await deadLetter(receipt);
    const clients = Array.from({ length: 5 }, () => ({
      unitOfWork: postgresSettlementUnitOfWork(createDatabase(newPool(2))),
    }));
    const results = await Promise.all(
      clients.map((t, i) =>
        replayDeadLetter(t, support, { receiptId: receipt, note: 'n', operationId: `op-race-${i}` }),
      ),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.filter((r) => !r.ok).map((r) => !r.ok && r.error.code)).toEqual([
      'CONFLICT',
      'CONFLICT',
      'CONFLICT',
      'CONFLICT',
    ]);
    expect((await stateOf(receipt)).replays).toHaveLength(1);
  });

  it('refuses a receipt that is not dead-lettered with CONFLICT, auditing only the refusal', async () => {
    const queued = nextId('r');
    await postgresSettlementStore(db).enqueue({ receiptId: queued, finalizedAt: 1, nowMs: 5 });
    for (const receiptId of [queued, 'never-seen']) {
      const result = await replayDeadLetter(deps, support, { receiptId, note: 'n', operationId: nextId('op') });
      expect(result).toMatchObject({ ok: false, error: { code: 'CONFLICT' } });
    }
    const state = await stateOf(queued);
    expect(state.attempts).toEqual([
      { work_kind: 'pending_observation', attempts: 0, next_visible_at_ms: 5, row_version: 0, lease_owner: null },
    ]);
    expect(state.replays).toEqual([]);
    expect(state.audit).toEqual([expect.objectContaining({ outcome: 'REFUSED', code: 'CONFLICT' })]);
  });

  it('refuses roles without the replay permission; nothing changes but the refusal audit', async () => {
    const receipt = nextId('r');
    await deadLetter(receipt);
    for (const actor of [viewer, operator]) {
      const result = await replayDeadLetter(deps, actor, {
        receiptId: receipt,
        note: 'n',
        operationId: nextId('op'),
      });
      expect(result).toMatchObject({ ok: false, error: { code: 'FORBIDDEN' } });
    }
    const state = await stateOf(receipt);
    expect(state.deadLetters).toEqual([{ attempts: 6, reason: 'rpc' }]);
    expect(state.attempts).toEqual([]);
    expect(state.replays).toEqual([]);
    expect(state.events).toEqual([]);
    expect(state.audit.map((a) => [a.outcome, a.code])).toEqual([
      ['REFUSED', 'FORBIDDEN'],
      ['REFUSED', 'FORBIDDEN'],
    ]);
  });

  it('requires a note and a well-formed operation id, and refuses an id spent on another receipt', async () => {
    const receipt = nextId('r');
    await deadLetter(receipt);
    const replay = throughAction('settlement.replay', support);
    expect(await replay({ receiptId: receipt, note: '   ', operationId: 'op-x' })).toMatchObject(invalid('note'));
    expect(await replay({ receiptId: receipt, note: 'n', operationId: 'has space' })).toMatchObject(
      invalid('operationId'),
    );
    expect(await replay({ receiptId: receipt, note: 'n', operationId: 'o'.repeat(65) })).toMatchObject(
      invalid('operationId'),
    );
    expect(await replayDeadLetter(deps, support, { receiptId: receipt, note: 'n', operationId: 'op-1' })).toMatchObject(
      { ok: false, error: { code: 'OPERATION_ID_REUSED' } },
    );
    expect((await stateOf(receipt)).deadLetters).toHaveLength(1);
  });

  it('lets a replayed receipt fail again and be replayed again, with the whole history kept', async () => {
    const receipt = nextId('r');
    await deadLetter(receipt, 'rpc', 6);
    expect(
      await replayDeadLetter(deps, support, { receiptId: receipt, note: 'first', operationId: nextId('op') }),
    ).toMatchObject({ ok: true });
    const store = postgresSettlementStore(db);
    const claim = await store.claimReceipt(receipt, 'w', (await serverNowMs()) + 10, 60_000);
    if (!claim.ok || !claim.value) throw new Error('claim failed');
    const routed = await store.recordClaimedOutcome(
      claim.value,
      { kind: 'Permanent', code: 'verification' },
      DEFAULT_RETRY_POLICY,
      claim.value.leaseUntilMs - 1,
    );
    expect(routed).toEqual({ ok: true, value: { kind: 'DeadLettered', attempts: 1 } });
    expect(
      await replayDeadLetter(deps, support, { receiptId: receipt, note: 'second', operationId: nextId('op') }),
    ).toMatchObject({ ok: true, value: { priorAttempts: 1, priorReason: 'verification' } });
    expect((await stateOf(receipt)).events).toEqual(['replayed', 'dead_lettered', 'replayed']);
  });
});

describe('discarding a dead letter', () => {
  it('deletes it, keeps its JSON in the audit event, and is idempotent by operation id', async () => {
    const receipt = nextId('r');
    const json = await deadLetter(receipt, 'invalid_input', 1);
    const input = { receiptId: receipt, note: 'garbage receipt', operationId: nextId('op') };
    const first = await discardDeadLetter(deps, support, input);
    expect(first).toMatchObject({
      ok: true,
      value: { receiptId: receipt, canonicalJson: json, attempts: 1, reason: 'invalid_input' },
    });
    expect(await discardDeadLetter(deps, support, input)).toEqual(first);
    const state = await stateOf(receipt);
    expect(state.deadLetters).toEqual([]);
    expect(state.attempts).toEqual([]);
    expect(state.events).toEqual(['discarded']);
    const audit = await pool.query(`select before, outcome from keel.audit_event where target_id = $1`, [receipt]);
    expect(audit.rows).toEqual([{ outcome: 'APPLIED', before: expect.objectContaining({ canonicalJson: json }) }]);
    expect(await discardDeadLetter(deps, support, { ...input, operationId: nextId('op') })).toMatchObject({
      ok: false,
      error: { code: 'CONFLICT' },
    });
  });

  it('requires a note and the support role', async () => {
    const receipt = nextId('r');
    await deadLetter(receipt);
    expect(
      await throughAction('settlement.discard', support)({ receiptId: receipt, note: '', operationId: nextId('op') }),
    ).toMatchObject(invalid('note'));
    expect(
      await discardDeadLetter(deps, viewer, { receiptId: receipt, note: 'n', operationId: nextId('op') }),
    ).toMatchObject({ ok: false, error: { code: 'FORBIDDEN' } });
    expect((await stateOf(receipt)).deadLetters).toHaveLength(1);
  });
});

describe('requeueing a retry-scheduled settlement', () => {
  async function retryLater(receiptId: string, nextVisibleAtMs: number, lease: [string, string, number] | null = null) {
    await pool.query(
      `insert into settle.attempts (receipt_id, finalized_at, work_kind, attempts, next_visible_at_ms, row_version,
         lease_owner, lease_token, lease_until_ms, reason_code, updated_at_ms)
       values ($1, 1, 'retry_scheduled', 2, $2, 4, $3, $4, $5, 'rpc', 1)`,
      [receiptId, nextVisibleAtMs, lease?.[0] ?? null, lease?.[1] ?? null, lease?.[2] ?? null],
    );
  }

  it('makes it due now, guarded by row_version, once per operation id', async () => {
    const receipt = nextId('r');
    await retryLater(receipt, (await serverNowMs()) + 3_600_000);
    const input = { receiptId: receipt, expectedRowVersion: 4, operationId: nextId('op') };
    const first = await requeueSettlement(deps, support, input);
    expect(first).toMatchObject({ ok: true, value: { receiptId: receipt, rowVersion: 5 } });
    expect(first.ok && first.value.nextVisibleAtMs).toBeLessThanOrEqual(await serverNowMs());
    expect(await requeueSettlement(deps, support, input)).toEqual(first);
    const state = await stateOf(receipt);
    expect(state.attempts[0]).toMatchObject({ work_kind: 'retry_scheduled', attempts: 2, row_version: 5 });
    expect(state.events).toEqual(['requeued']);
    expect(state.audit.map((a) => a.outcome)).toEqual(['APPLIED']);
    // A second submit that saw the old row is refused: the row moved on.
    expect(await requeueSettlement(deps, support, { ...input, operationId: nextId('op') })).toMatchObject({
      ok: false,
      error: { code: 'CONFLICT' },
    });
  });

  it('refuses a pending observation, a live lease, an absent receipt and a viewer', async () => {
    const pending = nextId('r');
    await postgresSettlementStore(db).enqueue({ receiptId: pending, finalizedAt: 1, nowMs: 1 });
    const leased = nextId('r');
    await retryLater(leased, 0, ['worker', 'token', (await serverNowMs()) + 600_000]);
    const later = nextId('r');
    await retryLater(later, (await serverNowMs()) + 600_000);
    const refusals: [Actor, string, number][] = [
      [support, pending, 0],
      [support, leased, 4],
      [support, 'absent', 0],
      [viewer, later, 4],
    ];
    for (const [actor, receiptId, version] of refusals) {
      const result = await requeueSettlement(deps, actor, {
        receiptId,
        expectedRowVersion: version,
        operationId: nextId('op'),
      });
      expect(result).toMatchObject({ ok: false, error: { code: actor === viewer ? 'FORBIDDEN' : 'CONFLICT' } });
    }
    expect((await stateOf(later)).attempts[0].row_version).toBe(4);
    expect((await stateOf(leased)).attempts[0].row_version).toBe(4);
  });

  it('writes a lapsed claim it clears as a claimed event, before the requeue', async () => {
    const receipt = nextId('r');
    const now = await serverNowMs();
    await retryLater(receipt, now + 3_600_000, ['worker', 'token', now - 1_000]);
    await pool.query('update settle.attempts set updated_at_ms = $2 where receipt_id = $1', [receipt, now - 61_000]);
    const result = await requeueSettlement(deps, support, {
      receiptId: receipt,
      expectedRowVersion: 4,
      operationId: nextId('op'),
    });
    expect(result).toMatchObject({ ok: true, value: { rowVersion: 5 } });
    expect((await stateOf(receipt)).attempts[0].lease_owner).toBeNull();
    const { rows } = await pool.query(
      'select kind, attempt, at_ms from keel.settlement_event where receipt_id = $1 order by id',
      [receipt],
    );
    expect(rows.map((r) => [r.kind, r.attempt, Number(r.at_ms)])).toEqual([
      ['claimed', 2, now - 61_000],
      ['requeued', 2, expect.any(Number)],
    ]);
  });

  it('never moves a retry that is already due further back', async () => {
    const receipt = nextId('r');
    await retryLater(receipt, 1_000);
    const result = await requeueSettlement(deps, support, {
      receiptId: receipt,
      expectedRowVersion: 4,
      operationId: nextId('op'),
    });
    expect(result).toMatchObject({ ok: true, value: { nextVisibleAtMs: 1_000, rowVersion: 5 } });
  });
});
