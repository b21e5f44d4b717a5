import { describe, expect, it } from 'vitest';
import { confirmTakeover } from '../../lib/services/confirm-takeover';
import { cancelProposal, rejectProposal } from '../../lib/services/decide-proposal';
import { expireProposals, HOUSEKEEPING_ACTOR } from '../../lib/services/expire-proposals';
import { proposeRecovery } from '../../lib/services/propose-recovery';
import { requestStop } from '../../lib/services/request-stop';
import { freshDatabase } from '../support/database';
import { actor, expireDeadline, proposeStaleTakeover, recoveryDeps } from '../support/recovery-fixtures';

const { db, pool } = await freshDatabase();
const deps = recoveryDeps(db);
const operator = actor('operator');
const approver = actor('approver');

const pendingProposal = (by = operator) => proposeStaleTakeover(db, deps, by);

const codeOf = (result: { ok: boolean; error?: { code: string } }) => (result.ok ? 'OK' : result.error!.code);

async function auditCodes(proposalId: number, action: string) {
  const { rows } = await pool.query(
    'select outcome, code from keel.audit_event where operation_id = $1 and action = $2 order by id',
    [`keel-proposal-${proposalId}`, action],
  );
  return rows.map((row) => row.code ?? row.outcome);
}

const proposalRow = async (id: number) =>
  (
    await pool.query(
      'select status, decider_login, reason, decided_at is not null as decided from keel.recovery_proposal ' +
        'where id = $1',
      [id],
    )
  ).rows[0];

describe('rejectProposal', () => {
  it('lets an approver other than the proposer reject, leaving the execution alone', async () => {
    const { execution, proposal } = await pendingProposal();
    expect(codeOf(await rejectProposal(deps, operator, { proposalId: proposal.id }))).toBe('FOUR_EYES_REQUIRED');
    expect(codeOf(await rejectProposal(deps, actor('viewer'), { proposalId: proposal.id }))).toBe('FORBIDDEN');
    const rejected = await rejectProposal(deps, approver, { proposalId: proposal.id, reason: 'owner is alive' });
    expect(rejected).toMatchObject({
      ok: true,
      value: {
        proposal: { status: 'REJECTED', decision: { decider: { login: approver.login }, reason: 'owner is alive' } },
      },
    });
    expect(await proposalRow(proposal.id)).toEqual({
      status: 'REJECTED',
      decider_login: approver.login,
      reason: 'owner is alive',
      decided: true,
    });
    const { rows } = await pool.query('select status, version from oxide_batch.ob_job_execution where id = $1', [
      execution.id,
    ]);
    expect(rows[0]).toEqual({ status: 'STARTED', version: 7 });
    const late = await confirmTakeover(deps, actor('approver'), {
      proposalId: proposal.id,
      evidenceDigest: proposal.evidenceDigestHex,
      expectedVersion: 7,
      resultingStatus: 'FAILED',
    });
    expect(late).toMatchObject({
      ok: false,
      error: {
        code: 'PROPOSAL_DECIDED',
        message: `Proposal ${proposal.id} was already rejected by ${approver.login}.`,
      },
    });
    expect(await auditCodes(proposal.id, 'recovery.reject')).toEqual(['FOUR_EYES_REQUIRED', 'FORBIDDEN', 'APPLIED']);
  });
});

describe('cancelProposal', () => {
  it('lets the proposer or an admin cancel, nobody else', async () => {
    const { proposal } = await pendingProposal();
    expect(codeOf(await cancelProposal(deps, actor('operator'), { proposalId: proposal.id }))).toBe('FORBIDDEN');
    expect(codeOf(await cancelProposal(deps, approver, { proposalId: proposal.id }))).toBe('FORBIDDEN');
    expect(await cancelProposal(deps, operator, { proposalId: proposal.id })).toMatchObject({
      ok: true,
      value: { proposal: { status: 'CANCELLED' } },
    });
    expect(codeOf(await cancelProposal(deps, operator, { proposalId: proposal.id }))).toBe('PROPOSAL_CANCELLED');
    expect(codeOf(await rejectProposal(deps, approver, { proposalId: proposal.id }))).toBe('PROPOSAL_CANCELLED');

    const second = await pendingProposal();
    expect(codeOf(await cancelProposal(deps, actor('admin'), { proposalId: second.proposal.id }))).toBe('OK');
    expect(await auditCodes(proposal.id, 'recovery.cancel')).toEqual([
      'FORBIDDEN',
      'FORBIDDEN',
      'APPLIED',
      'PROPOSAL_CANCELLED',
    ]);
  });

  it('frees the target for a new proposal once cancelled', async () => {
    const { execution, proposal } = await pendingProposal();
    await cancelProposal(deps, operator, { proposalId: proposal.id });
    const next = await proposeRecovery(deps, operator, {
      target: 'batch',
      reason: 'owner silent',
      executionId: execution.id,
    });
    expect(next).toMatchObject({ ok: true, value: { created: true } });
    expect(next.ok && next.value.proposal.id).not.toBe(proposal.id);
  });
});

describe('expireProposals', () => {
  it('closes pending proposals past their deadline, and only those', async () => {
    const due = await pendingProposal();
    const notDue = await pendingProposal();
    const decided = await pendingProposal();
    await rejectProposal(deps, approver, { proposalId: decided.proposal.id });
    await expireDeadline(db, due.proposal.id);
    await expireDeadline(db, decided.proposal.id);
    const result = await expireProposals(deps, HOUSEKEEPING_ACTOR);
    expect(result).toEqual({ ok: true, value: { expired: [due.proposal.id] } });
    expect((await proposalRow(due.proposal.id)).status).toBe('EXPIRED');
    expect((await proposalRow(notDue.proposal.id)).status).toBe('PENDING');
    expect((await proposalRow(decided.proposal.id)).status).toBe('REJECTED');
    expect(await auditCodes(due.proposal.id, 'recovery.expire')).toEqual(['APPLIED']);
    expect(await expireProposals(deps, HOUSEKEEPING_ACTOR)).toEqual({ ok: true, value: { expired: [] } });
    // Reject finds the deadline rule too.
    await expireDeadline(db, notDue.proposal.id);
    expect(codeOf(await rejectProposal(deps, approver, { proposalId: notDue.proposal.id }))).toBe('PROPOSAL_EXPIRED');
    expect((await proposalRow(notDue.proposal.id)).status).toBe('EXPIRED');
  });
});

describe('requestStop', () => {
  it('makes a proposal made before the stop request stale', async () => {
    const { execution, proposal } = await pendingProposal();
    expect(
      codeOf(
        await requestStop(deps, actor('operator'), { executionId: execution.id, operationId: `stop-${execution.id}` }),
      ),
    ).toBe('OK');
    const result = await confirmTakeover(deps, approver, {
      proposalId: proposal.id,
      evidenceDigest: proposal.evidenceDigestHex,
      expectedVersion: proposal.expectedVersion,
      resultingStatus: 'FAILED',
    });
    expect(result).toMatchObject({ ok: false, error: { code: 'RECOVERY_EVIDENCE_STALE' } });
    // Superseded, not merely refused: the proposal is closed.
    expect(
      (await pool.query('select status from keel.recovery_proposal where id = $1', [proposal.id])).rows[0],
    ).toEqual({
      status: 'SUPERSEDED',
    });
  });
});
