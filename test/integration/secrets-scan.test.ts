import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { postgresCheckpointStore } from '../../lib/adapters/checkpoint-store';
import { postgresFaultStateStore } from '../../lib/adapters/fault-state-store';
import { postgresProposalRepository } from '../../lib/adapters/proposal-repository';
import { postgresRecoveryRepository } from '../../lib/adapters/recovery-repository';
import { listRetryKeys } from '../../lib/queries/retry-keys';
import { confirmTakeover } from '../../lib/services/confirm-takeover';
import { cancelProposal, rejectProposal } from '../../lib/services/decide-proposal';
import { expireProposals, HOUSEKEEPING_ACTOR } from '../../lib/services/expire-proposals';
import { proposeRecovery } from '../../lib/services/propose-recovery';
import { requestStop } from '../../lib/services/request-stop';
import { freshDatabase } from '../support/database';
import { actor, MINUTE, recoveryDeps, seedCheckpoint, seedStaleExecution, seedStep, testCheckpoint } from '../support/recovery-fixtures';

const { db, pool } = await freshDatabase();
const KEY = randomBytes(32);
/** The runtime worker's token, written as the executions' owner. */
const RUNTIME_TOKEN = randomBytes(16);
/** This Keel process's token, handed to every snapshot read. */
const KEEL_TOKEN = randomBytes(16);
const deps = recoveryDeps(db, { checkpointKey: KEY, ownerToken: KEEL_TOKEN });

const encodings = (bytes: Buffer) => [
  bytes.toString('hex'),
  bytes.toString('hex').toUpperCase(),
  bytes.toString('base64'),
  bytes.toString('base64url'),
];
const SECRETS = [...encodings(RUNTIME_TOKEN), ...encodings(KEEL_TOKEN), ...encodings(KEY)];

/** Serializes anything, writing every byte string in both hex and base64 so no encoding hides a token. */
function serialize(value: unknown): string {
  return JSON.stringify(value, (_, item) => {
    if (item && typeof item === 'object' && item.type === 'Buffer' && Array.isArray(item.data)) {
      const bytes = Buffer.from(item.data);
      return { hex: bytes.toString('hex'), base64: bytes.toString('base64') };
    }
    if (item instanceof Uint8Array) return { hex: Buffer.from(item).toString('hex'), base64: Buffer.from(item).toString('base64') };
    return item;
  });
}

const leaks = (outputs: unknown[]) => {
  const text = outputs.map(serialize).join('\n');
  return SECRETS.filter((secret) => text.includes(secret));
};

describe('secrets never leave through a result or a stored summary', () => {
  it('the scanner finds a token when one is there (positive control)', () => {
    expect(leaks([{ nested: [Buffer.from(RUNTIME_TOKEN)] }])).not.toEqual([]);
    expect(leaks([{ key: KEY.toString('base64') }])).not.toEqual([]);
  });

  it('no service output, port read, query page or audit/proposal row carries the owner tokens or the checkpoint key', async () => {
    const outputs: unknown[] = [];
    const keep = <T>(value: T): T => {
      outputs.push(value);
      return value;
    };
    const operator = actor('operator');
    const approver = actor('approver');

    // Batch: propose (applied, reused, refused), confirm, reject, cancel, expire, stop.
    const stale = await seedStaleExecution(db, { ownerToken: RUNTIME_TOKEN, deliveryMode: 'at_least_once' });
    await seedStep(db, { executionId: stale.id, checkpointPayload: { offset: 1 } });
    const owned = await seedStaleExecution(db, { ownerToken: KEEL_TOKEN });
    const proposed = keep(await proposeRecovery(deps, operator, { target: 'batch', executionId: stale.id }));
    keep(await proposeRecovery(deps, actor('admin'), { target: 'batch', executionId: stale.id }));
    keep(await proposeRecovery(deps, operator, { target: 'batch', executionId: owned.id }));
    if (!proposed.ok) throw new Error(proposed.error.code);
    const proposal = proposed.value.proposal;
    const input = { proposalId: proposal.id, evidenceDigest: proposal.evidenceDigestHex, expectedVersion: proposal.expectedVersion, resultingStatus: 'FAILED' as const };
    keep(await confirmTakeover(deps, approver, input));
    keep(await confirmTakeover(deps, approver, { ...input, acknowledged: true }));
    keep(await confirmTakeover(deps, actor('approver'), { ...input, acknowledged: true }));

    const other = await seedStaleExecution(db, { ownerToken: RUNTIME_TOKEN });
    const second = keep(await proposeRecovery(deps, operator, { target: 'batch', executionId: other.id }));
    if (!second.ok) throw new Error(second.error.code);
    keep(await rejectProposal(deps, operator, { proposalId: second.value.proposal.id }));
    keep(await cancelProposal(deps, operator, { proposalId: second.value.proposal.id }));
    keep(await expireProposals(deps, HOUSEKEEPING_ACTOR));
    const running = await seedStaleExecution(db, { ownerToken: RUNTIME_TOKEN });
    keep(await requestStop(deps, operator, { executionId: running.id, operationId: `scan-stop-${running.id}` }));
    keep(await requestStop(deps, operator, { executionId: running.id, operationId: `scan-stop-${running.id}` }));

    // Orchestration: propose and confirm, then the store's reads.
    const checkpoint = await seedCheckpoint(db, KEY, testCheckpoint('orch-scan', { ownerId: 'worker-a', fencingToken: 2, expiresAt: Date.now() - MINUTE }));
    const orchestration = keep(await proposeRecovery(deps, operator, { target: 'orchestration', executionId: checkpoint.executionId, successorOwner: 'worker-b' }));
    if (!orchestration.ok) throw new Error(orchestration.error.code);
    keep(await confirmTakeover(deps, approver, { proposalId: orchestration.value.proposal.id, evidenceDigest: orchestration.value.proposal.evidenceDigestHex, expectedFencingToken: 2 }));
    const store = postgresCheckpointStore(db, KEY);
    keep(await store.load(checkpoint.executionId));
    keep(await store.save({ ...checkpoint, lease: { ownerId: 'worker-c', fencingToken: 9, expiresAt: Date.now() - MINUTE } }));
    keep(await store.takeoverCandidates({ limit: 50 }));

    // Port reads and the retry-key read model.
    for (const id of [stale.id, owned.id, other.id, running.id]) keep(await postgresRecoveryRepository(db).recoverySnapshot(id, KEEL_TOKEN));
    keep(await postgresProposalRepository(db).get(proposal.id));
    const faults = postgresFaultStateStore(db);
    const stepId = await seedStep(db, { executionId: running.id, logicalId: 'second' });
    keep(await faults.bind({ stepExecutionId: stepId, jobExecutionId: running.id, retryStateLimit: 4, classifierRevision: 'v1' }));
    keep(await faults.reserve({ key: 'ab'.repeat(32), phase: 'read', category: 'TIMEOUT', ordinal: 1, checkpointDigest: 'cd'.repeat(32) }));
    keep(await faults.unresolved());
    keep(await listRetryKeys(db, { limit: 50 }));

    // What Keel stored about all of it.
    keep((await pool.query('select * from keel.audit_event')).rows);
    keep((await pool.query('select * from keel.recovery_proposal')).rows);
    keep((await pool.query('select * from keel.durable_checkpoint')).rows);
    keep((await pool.query('select * from oxide_batch.ob_recovery_decision')).rows);
    keep((await pool.query('select * from oxide_batch.ob_operator_request')).rows);

    expect(outputs.length).toBeGreaterThanOrEqual(30);
    expect(outputs.filter((output) => (output as { ok?: boolean }).ok === true).length).toBeGreaterThanOrEqual(10);
    expect(leaks(outputs)).toEqual([]);
    // The runtime still holds its token where it belongs: the scan above was not vacuous.
    const { rows } = await pool.query('select owner_token from oxide_batch.ob_job_execution where id = $1', [stale.id]);
    expect(leaks([rows])).toContain(RUNTIME_TOKEN.toString('hex'));
  });
});
