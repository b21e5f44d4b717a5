import { describe, expect, it } from 'vitest';
import { isFailureCategory } from '../../lib/domain/batch-status';
import { recoverRequestDigestHex } from '../../lib/domain/recovery';
import type { RecoveryProposal } from '../../lib/ports/proposal-repository';
import { confirmTakeover, type ConfirmTakeoverInput } from '../../lib/services/confirm-takeover';
import { proposeRecovery } from '../../lib/services/propose-recovery';
import { freshDatabase } from '../support/database';
import {
  actor,
  recoveryDeps,
  seedStaleExecution,
  type ExecutionOptions,
  type DefinitionOptions,
} from '../support/recovery-fixtures';

const { db, pool } = await freshDatabase();
const deps = recoveryDeps(db);
const operator = actor('operator');
const approver = actor('approver', 'approver.two@example.com');

/** Proposes and confirms a takeover; returns the proposal and the execution row as it was before. */
async function takeOver(seed: Partial<ExecutionOptions> & DefinitionOptions, confirm: Partial<ConfirmTakeoverInput>) {
  const execution = await seedStaleExecution(db, seed);
  const before = (await pool.query('select * from oxide_batch.ob_job_execution where id = $1', [execution.id])).rows[0];
  const proposed = await proposeRecovery(deps, operator, {
    target: 'batch',
    reason: 'owner silent',
    executionId: execution.id,
  });
  if (!proposed.ok) throw new Error(proposed.error.code);
  const proposal = proposed.value.proposal;
  const result = await confirmTakeover(deps, approver, {
    proposalId: proposal.id,
    evidenceDigest: proposal.evidenceDigestHex,
    expectedVersion: proposal.expectedVersion,
    resultingStatus: 'FAILED',
    ...confirm,
  });
  if (!result.ok) throw new Error(result.error.code);
  return { executionId: execution.id, before, proposal };
}

/** Reads the three runtime rows back the way the runtime would, checking every shape rule. */
async function readBack(executionId: number, proposal: RecoveryProposal, before: Record<string, unknown>) {
  const execution = (await pool.query('select * from oxide_batch.ob_job_execution where id = $1', [executionId]))
    .rows[0];
  const decisions = (
    await pool.query('select * from oxide_batch.ob_recovery_decision where job_execution_id = $1', [executionId])
  ).rows;
  const requests = (
    await pool.query('select * from oxide_batch.ob_operator_request where job_execution_id = $1', [executionId])
  ).rows;
  expect(decisions).toHaveLength(1);
  expect(requests).toHaveLength(1);
  const [decision, request] = [decisions[0], requests[0]];

  // Execution: ended exactly now, one version on, owner token untouched.
  expect(execution.ended_at).not.toBeNull();
  expect(execution.ended_at.getTime()).toBe(execution.updated_at.getTime());
  expect(execution.updated_at.getTime()).toBeGreaterThan((before.updated_at as Date).getTime());
  expect(execution.version).toBe(proposal.expectedVersion! + 1);
  expect(Buffer.compare(execution.owner_token, before.owner_token as Buffer)).toBe(0);
  expect((execution.failure_category === null) === (execution.failure_id === null)).toBe(true);
  for (const column of [
    'attempt',
    'job_instance_id',
    'exit_code',
    'stop_requested_at',
    'stop_requested_by',
    'started_at',
  ]) {
    expect(execution[column]).toEqual(before[column]);
  }

  // Decision: bound to the observed version and the evidence the approver confirmed.
  expect(decision).toMatchObject({
    execution_version: proposal.expectedVersion,
    prior_status: before.status,
    resulting_status: execution.status,
    operator_reference: `keel:proposal:${proposal.id}`,
  });
  expect(decision.evidence_digest.toString('hex')).toBe(proposal.evidenceDigestHex);
  expect(decision.decided_at.getTime()).toBe(execution.updated_at.getTime());

  // Operator request: the APPLIED RECOVER row, its digest recomputed from stored fields only.
  expect(request).toMatchObject({
    job_instance_id: execution.job_instance_id,
    action: 'RECOVER',
    authorization_class: 'DESTRUCTIVE',
    operation_id: `keel-proposal-${proposal.id}`,
    actor_ref: approver.login,
    reason_code: decision.reason_code,
    observed_version: decision.execution_version,
    prior_status: decision.prior_status,
    result_status: decision.resulting_status,
    outcome_class: 'APPLIED',
    rejection_code: null,
  });
  expect(request.requested_at.getTime()).toBe(decision.decided_at.getTime());
  const stored = (
    await pool.query(
      `select evidence -> 'markers' ->> 'unknownCommit' as unknown_commit from keel.recovery_proposal where id = $1`,
      [proposal.id],
    )
  ).rows[0];
  const failed = request.result_status === 'FAILED';
  if (failed && !isFailureCategory(execution.failure_category)) throw new Error('FAILED without a category');
  const recomputed = recoverRequestDigestHex({
    executionId: Number(request.job_execution_id),
    observedVersion: Number(request.observed_version),
    reasonCode: request.reason_code,
    evidenceDigest: decision.evidence_digest.toString('hex'),
    unknownCommit: stored.unknown_commit === 'true',
    ...(failed
      ? {
          resultingStatus: 'FAILED' as const,
          failure: { category: execution.failure_category, id: Number(execution.failure_id) },
        }
      : { resultingStatus: 'ABANDONED' as const, failure: null }),
  });
  expect(recomputed).toEqual({ ok: true, value: request.request_digest.toString('hex') });
  return { execution, decision, request };
}

describe('rows a batch takeover writes, read back as the runtime reads them', () => {
  it('STARTED -> FAILED with the default category, failure id = proposal id', async () => {
    const { executionId, proposal, before } = await takeOver({ version: 21 }, {});
    const { execution, decision } = await readBack(executionId, proposal, before);
    expect(execution).toMatchObject({
      status: 'FAILED',
      failure_category: 'STALE_RECOVERED',
      failure_id: proposal.id,
      version: 22,
    });
    expect(decision.reason_code).toBe('OPERATOR_CONFIRMED');
  });

  it('UNKNOWN -> ABANDONED keeps the runtime failure it already carried', async () => {
    const { executionId, proposal, before } = await takeOver(
      { status: 'UNKNOWN', failure: { category: 'UNKNOWN_COMMIT', id: 77 }, deliveryMode: 'best_effort' },
      { resultingStatus: 'ABANDONED', acknowledged: true, reasonCode: 'OWNER_LOST' },
    );
    const { execution, decision } = await readBack(executionId, proposal, before);
    expect(execution).toMatchObject({ status: 'ABANDONED', failure_category: 'UNKNOWN_COMMIT', failure_id: 77 });
    expect(decision).toMatchObject({ prior_status: 'UNKNOWN', reason_code: 'OWNER_LOST' });
  });

  it('STOPPING with a stop request -> FAILED keeps the stop request', async () => {
    const execution = await seedStaleExecution(db, { status: 'STOPPING' });
    await pool.query(
      `update oxide_batch.ob_job_execution set stop_requested_at = updated_at - interval '1 minute',
       stop_requested_by = 'someone' where id = $1`,
      [execution.id],
    );
    const before = (await pool.query('select * from oxide_batch.ob_job_execution where id = $1', [execution.id]))
      .rows[0];
    const proposed = await proposeRecovery(deps, operator, {
      target: 'batch',
      reason: 'owner silent',
      executionId: execution.id,
    });
    if (!proposed.ok) throw new Error(proposed.error.code);
    const proposal = proposed.value.proposal;
    const result = await confirmTakeover(deps, approver, {
      proposalId: proposal.id,
      evidenceDigest: proposal.evidenceDigestHex,
      expectedVersion: proposal.expectedVersion,
      resultingStatus: 'FAILED',
      failureCategory: 'SHUTDOWN_INCOMPLETE',
    });
    expect(result.ok).toBe(true);
    const rows = await readBack(execution.id, proposal, before);
    expect(rows.execution).toMatchObject({
      status: 'FAILED',
      failure_category: 'SHUTDOWN_INCOMPLETE',
      stop_requested_by: 'someone',
    });
  });

  it('keeps one decision per version and releases the instance for a restart', async () => {
    const { executionId, proposal } = await takeOver({}, {});
    const { rows } = await pool.query(
      'select job_instance_id, definition_id from oxide_batch.ob_job_execution where id = $1',
      [executionId],
    );
    const { job_instance_id: instanceId, definition_id: definitionId } = rows[0];
    await expect(
      pool.query(
        `insert into oxide_batch.ob_recovery_decision (job_execution_id, execution_version, prior_status,
         resulting_status, reason_code, operator_reference, evidence_digest)
         values ($1, $2, 'STARTED', 'ABANDONED', 'AGAIN', 'x', decode(repeat('00', 32), 'hex'))`,
        [executionId, proposal.expectedVersion],
      ),
    ).rejects.toThrow(/ob_recovery_decision_job_execution_id_execution_version_key/);
    await expect(
      pool.query(
        `insert into oxide_batch.ob_operator_request (job_execution_id, action, authorization_class, operation_id,
         actor_ref, request_digest, outcome_class)
         values ($1, 'RECOVER', 'DESTRUCTIVE', $2, 'x', decode(repeat('00', 32), 'hex'), 'APPLIED')`,
        [executionId, `keel-proposal-${proposal.id}`],
      ),
    ).rejects.toThrow(/ob_operator_request_action_operation_id_key/);
    // A FAILED execution no longer holds the instance's one unresolved slot: the runtime can restart it.
    await pool.query(
      `insert into oxide_batch.ob_job_execution (job_instance_id, definition_id, restart_of_execution_id, attempt,
       status)
       values ($1, $2, $3, 2, 'STARTING')`,
      [instanceId, definitionId, executionId],
    );
    const again = await proposeRecovery(deps, operator, { target: 'batch', reason: 'owner silent', executionId });
    expect(again).toMatchObject({ ok: false, error: { code: 'NOT_RECOVERABLE' } });
  });
});
