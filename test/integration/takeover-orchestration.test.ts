import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { proposeTakeoverSchema } from '../../app/actions/recovery-schemas';
import { postgresCheckpointStore } from '../../lib/adapters/checkpoint-store';
import { orchestrationEvidenceDigestHex } from '../../lib/domain/recovery';
import { confirmTakeover } from '../../lib/services/confirm-takeover';
import { proposeRecovery } from '../../lib/services/propose-recovery';
import { actionAs } from '../support/actions';
import { freshDatabase } from '../support/database';
import { actor, MINUTE, recoveryDeps, seedCheckpoint, SETTINGS, testCheckpoint } from '../support/recovery-fixtures';

const { db, pool } = await freshDatabase();
const KEY = randomBytes(32);
const deps = recoveryDeps(db, { checkpointKey: KEY });
const store = postgresCheckpointStore(db, KEY);
const operator = actor('operator');
const approver = actor('approver');
let counter = 0;

async function expiredOrchestration(options: { expiredForMs?: number; token?: number } = {}) {
  const executionId = `orch-${(counter += 1)}`;
  const checkpoint = await seedCheckpoint(
    db,
    KEY,
    testCheckpoint(executionId, {
      ownerId: 'worker-a',
      fencingToken: options.token ?? 4,
      expiresAt: Date.now() - (options.expiredForMs ?? 10 * MINUTE),
    }),
  );
  return checkpoint;
}

const propose = (executionId: string, successorOwner = 'worker-b') =>
  proposeRecovery(deps, operator, { target: 'orchestration', reason: 'owner silent', executionId, successorOwner });

describe('orchestration takeover', () => {
  it('proposes an expired, authenticated lease with its evidence digest, token and successor', async () => {
    const checkpoint = await expiredOrchestration();
    const result = await propose(checkpoint.executionId);
    if (!result.ok) throw new Error(result.error.code);
    const { proposal } = result.value;
    expect(proposal).toMatchObject({
      target: { kind: 'orchestration', executionId: checkpoint.executionId },
      expectedVersion: null,
      expectedFencingToken: 4,
      successorOwner: 'worker-b',
      evidenceDigestHex: (
        orchestrationEvidenceDigestHex({
          executionId: checkpoint.executionId,
          authenticationTag: checkpoint.authenticationTag,
          fencingToken: 4,
          expiresAtMs: checkpoint.lease.expiresAt,
          leaseOwner: 'worker-a',
        }) as { value: string }
      ).value,
    });
  });

  it('refuses a live lease, a forged tag, a missing checkpoint and a malformed successor', async () => {
    const live = await seedCheckpoint(
      db,
      KEY,
      testCheckpoint('orch-live', { ownerId: 'w', fencingToken: 1, expiresAt: Date.now() + 10 * MINUTE }),
    );
    const forged = await expiredOrchestration();
    await pool.query(
      `update keel.durable_checkpoint set authentication_tag = repeat('0', 64),
                        checkpoint = jsonb_set(checkpoint, '{authentication_tag}', to_jsonb(repeat('0', 64)))
                        where execution_id = $1`,
      [forged.executionId],
    );
    const codes = [];
    for (const [id, successor] of [
      [live.executionId, 'w2'],
      [forged.executionId, 'w2'],
      ['orch-missing', 'w2'],
    ]) {
      const result = await propose(id!, successor);
      codes.push(result.ok ? 'OK' : result.error.code);
    }
    expect(codes).toEqual(['LEASE_NOT_EXPIRED', 'AUTHENTICATION_FAILED', 'ORCHESTRATION_NOT_FOUND']);
    // A successor that is not an actor reference never reaches the service: the action's schema refuses it.
    const proposeThroughAction = actionAs(db, operator, proposeTakeoverSchema, 'recovery.propose', (who, input) =>
      proposeRecovery(deps, who, input),
    );
    const badOwner = { target: 'orchestration', executionId: live.executionId, successorOwner: 'bad owner!' } as const;
    expect(await proposeThroughAction({ ...badOwner, reason: 'owner silent' })).toMatchObject({
      ok: false,
      code: 'INVALID_INPUT',
      fieldErrors: { successorOwner: expect.any(Array) },
    });
    const { rows } = await pool.query(
      `select count(*)::int as n from keel.recovery_proposal where target_kind = 'orchestration'
       and target_id = any($1)`,
      [[live.executionId, forged.executionId]],
    );
    expect(rows[0].n).toBe(0);
  });

  it('hands the lease to the successor with the next token and a fresh expiry, re-sealed', async () => {
    const checkpoint = await expiredOrchestration();
    const proposed = await propose(checkpoint.executionId);
    if (!proposed.ok) throw new Error(proposed.error.code);
    const { proposal } = proposed.value;
    const before = Date.now();
    const result = await confirmTakeover(deps, approver, {
      proposalId: proposal.id,
      evidenceDigest: proposal.evidenceDigestHex,
      expectedFencingToken: 4,
    });
    expect(result).toMatchObject({
      ok: true,
      value: { kind: 'orchestration', leaseOwner: 'worker-b', fencingToken: 5 },
    });
    const loaded = await store.load(checkpoint.executionId);
    if (!loaded.ok || !loaded.value) throw new Error('checkpoint gone');
    const { lease } = loaded.value.checkpoint;
    expect(lease.ownerId).toBe('worker-b');
    expect(lease.fencingToken).toBe(5);
    expect(lease.expiresAt).toBeGreaterThanOrEqual(before + SETTINGS.orchestrationLeaseMs - 5_000);
    expect(lease.expiresAt).toBeLessThanOrEqual(Date.now() + SETTINGS.orchestrationLeaseMs + 5_000);
    expect(store.verify(loaded.value.checkpoint)).toBe(true);
    expect(loaded.value.checkpoint.completedNodeIds).toEqual(checkpoint.completedNodeIds);
    const { rows } = await pool.query('select status, decider_login from keel.recovery_proposal where id = $1', [
      proposal.id,
    ]);
    expect(rows[0]).toEqual({ status: 'APPROVED', decider_login: approver.login });
  });

  it('supersedes when the old owner saved a newer lease after the proposal', async () => {
    const checkpoint = await expiredOrchestration();
    const proposed = await propose(checkpoint.executionId);
    if (!proposed.ok) throw new Error(proposed.error.code);
    const { proposal } = proposed.value;
    expect(
      (
        await store.save({
          ...checkpoint,
          lease: { ownerId: 'worker-a', fencingToken: 5, expiresAt: Date.now() + MINUTE },
        })
      ).ok,
    ).toBe(true);
    const result = await confirmTakeover(deps, approver, {
      proposalId: proposal.id,
      evidenceDigest: proposal.evidenceDigestHex,
      expectedFencingToken: 4,
    });
    expect(result).toMatchObject({ ok: false, error: { code: 'RECOVERY_EVIDENCE_STALE' } });
    // Superseded, not merely refused: the proposal is closed.
    expect(
      (await pool.query('select status from keel.recovery_proposal where id = $1', [proposal.id])).rows[0],
    ).toEqual({
      status: 'SUPERSEDED',
    });
    const loaded = await store.load(checkpoint.executionId);
    expect(loaded.ok && loaded.value?.checkpoint.lease.ownerId).toBe('worker-a');
  });

  it('refuses a tampered checkpoint at confirm without changing the proposal', async () => {
    const checkpoint = await expiredOrchestration();
    const proposed = await propose(checkpoint.executionId);
    if (!proposed.ok) throw new Error(proposed.error.code);
    const { proposal } = proposed.value;
    await pool.query(
      `update keel.durable_checkpoint set checkpoint = jsonb_set(checkpoint, '{completed_node_ids}', '["forged"]')
       where execution_id = $1`,
      [checkpoint.executionId],
    );
    const result = await confirmTakeover(deps, approver, {
      proposalId: proposal.id,
      evidenceDigest: proposal.evidenceDigestHex,
      expectedFencingToken: 4,
    });
    expect(result).toMatchObject({ ok: false, error: { code: 'AUTHENTICATION_FAILED' } });
    const stale = await confirmTakeover(deps, approver, {
      proposalId: proposal.id,
      evidenceDigest: proposal.evidenceDigestHex,
      expectedFencingToken: 3,
    });
    expect(stale).toMatchObject({ ok: false, error: { code: 'AUTHENTICATION_FAILED' } });
    const { rows } = await pool.query('select status from keel.recovery_proposal where id = $1', [proposal.id]);
    expect(rows[0].status).toBe('PENDING');
  });
});
