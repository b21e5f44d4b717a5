import { describe, expect, it } from 'vitest';
import { confirmTakeoverSchema, proposeTakeoverSchema } from '../../app/actions/recovery-schemas';
import { snapshotEvidenceDigestHex } from '../../lib/domain/recovery';
import { postgresRecoveryRepository } from '../../lib/adapters/recovery-repository';
import { confirmTakeover } from '../../lib/services/confirm-takeover';
import { proposeRecovery } from '../../lib/services/propose-recovery';
import { readProposal } from '../../lib/queries/recovery';
import { actionAs } from '../support/actions';
import { freshDatabase } from '../support/database';
import {
  actor,
  expireDeadline,
  fixedClock,
  MINUTE,
  recoveryDeps,
  seedStaleExecution,
  seedStep,
  SETTINGS,
} from '../support/recovery-fixtures';

const { db, pool } = await freshDatabase();
const deps = recoveryDeps(db);
const operator = actor('operator');
const approver = actor('approver');

async function proposeFor(executionId: number, by = operator) {
  const result = await proposeRecovery(deps, by, { target: 'batch', reason: 'owner silent', executionId });
  if (!result.ok) throw new Error(`propose: ${result.error.code}`);
  return result.value.proposal;
}

async function auditOf(targetId: string | number, action?: string) {
  const { rows } = await pool.query(
    `select action, outcome, code, actor_login, operation_id, digest, reason from keel.audit_event
     where target_id = $1 and ($2::text is null or action = $2) order by id`,
    [String(targetId), action ?? null],
  );
  return rows;
}

const proposalStatus = async (id: number) =>
  (await pool.query('select status, decider_login from keel.recovery_proposal where id = $1', [id])).rows[0];

describe('proposeRecovery (batch)', () => {
  it('stores a PENDING proposal bound to the snapshot with its approval wait; returns it while pending', async () => {
    const execution = await seedStaleExecution(db, { version: 11 });
    await seedStep(db, { executionId: execution.id, checkpointPayload: { offset: 5 } });
    const first = await proposeRecovery(deps, operator, {
      target: 'batch',
      reason: 'owner silent',
      executionId: execution.id,
    });
    if (!first.ok) throw new Error(first.error.code);
    const { proposal, created } = first.value;
    const snapshot = await postgresRecoveryRepository(db).recoverySnapshot(execution.id, deps.ownerToken);
    expect(created).toBe(true);
    expect(proposal).toMatchObject({
      status: 'PENDING',
      target: { kind: 'batch', executionId: execution.id },
      expectedVersion: 11,
      expectedFencingToken: null,
      proposer: { id: operator.id, login: operator.login },
      note: 'owner silent',
      decision: null,
    });
    expect(snapshot.ok && snapshotEvidenceDigestHex(snapshot.value)).toEqual({
      ok: true,
      value: proposal.evidenceDigestHex,
    });
    expect(proposal.wait).toMatchObject({
      kind: 'human_approval',
      ownerId: String(proposal.id),
      deadlineMs: proposal.createdAtMs + SETTINGS.proposalTtlMs,
    });
    expect(proposal.wait.cancellationId).toMatch(/^[0-9a-f-]{36}$/);
    expect(proposal.evidence).toMatchObject({
      executionId: execution.id,
      status: 'STARTED',
      owner: 'OTHER_PROCESS',
      digestHex: proposal.evidenceDigestHex,
    });

    const again = await proposeRecovery(deps, actor('admin'), {
      target: 'batch',
      reason: 'owner silent',
      executionId: execution.id,
    });
    expect(again).toMatchObject({ ok: true, value: { created: false, proposal: { id: proposal.id } } });
    expect((await auditOf(execution.id, 'recovery.propose')).map((e) => e.outcome)).toEqual(['APPLIED', 'APPLIED']);
  });

  it('refuses with the proposer rule that fails, and audits each refusal', async () => {
    const fresh = await seedStaleExecution(db, { silentForMs: MINUTE });
    const finished = await seedStaleExecution(db, { status: 'COMPLETED' });
    const mine = await seedStaleExecution(db, { ownerToken: Buffer.from(deps.ownerToken) });
    const skewed = await seedStaleExecution(db);
    const codeOf = async (executionId: number, by = operator, d = deps) => {
      const result = await proposeRecovery(d, by, { target: 'batch', reason: 'owner silent', executionId });
      return result.ok ? 'OK' : result.error.code;
    };
    expect(await codeOf(fresh.id)).toBe('NOT_STALE');
    expect(await codeOf(finished.id)).toBe('NOT_RECOVERABLE');
    expect(await codeOf(mine.id)).toBe('OWNED_BY_CURRENT_PROCESS');
    expect(await codeOf(987_654)).toBe('EXECUTION_NOT_FOUND');
    expect(await codeOf(skewed.id, approver)).toBe('FORBIDDEN');
    expect(
      await codeOf(skewed.id, operator, { ...deps, clock: fixedClock({ wallMs: () => Date.now() + 10 * MINUTE }) }),
    ).toBe('CLOCK_EVIDENCE_UNUSABLE');
    expect(await codeOf(skewed.id, operator, { ...deps, settings: { ...SETTINGS, staleThresholdMs: 1 } })).toBe(
      'INVALID_STALE_THRESHOLD',
    );
    for (const [id, code] of [
      [fresh.id, 'NOT_STALE'],
      [finished.id, 'NOT_RECOVERABLE'],
      [mine.id, 'OWNED_BY_CURRENT_PROCESS'],
    ] as const) {
      expect(await auditOf(id)).toEqual([
        expect.objectContaining({ action: 'recovery.propose', outcome: 'REFUSED', code }),
      ]);
    }
    expect((await auditOf(skewed.id)).map((e) => e.code)).toEqual([
      'FORBIDDEN',
      'CLOCK_EVIDENCE_UNUSABLE',
      'INVALID_STALE_THRESHOLD',
    ]);
    const { rows } = await pool.query(
      `select count(*)::int as n from keel.recovery_proposal where target_id = any($1)`,
      [[fresh.id, finished.id, mine.id, skewed.id].map(String)],
    );
    expect(rows[0].n).toBe(0);
  });
});

describe('confirmTakeover (batch)', () => {
  const confirmInput = (proposal: { id: number; evidenceDigestHex: string; expectedVersion: number | null }) => ({
    proposalId: proposal.id,
    evidenceDigest: proposal.evidenceDigestHex,
    expectedVersion: proposal.expectedVersion,
    resultingStatus: 'FAILED' as const,
  });

  it('fails the execution, records the approver as decider, and audits the takeover', async () => {
    const execution = await seedStaleExecution(db);
    const proposal = await proposeFor(execution.id);
    const result = await confirmTakeover(deps, approver, confirmInput(proposal));
    expect(result).toMatchObject({
      ok: true,
      value: { kind: 'batch', executionId: execution.id, resultingStatus: 'FAILED', version: 8 },
    });
    expect(await proposalStatus(proposal.id)).toEqual({ status: 'APPROVED', decider_login: approver.login });
    expect(await auditOf(execution.id, 'recovery.confirm')).toEqual([
      expect.objectContaining({
        outcome: 'APPLIED',
        code: null,
        actor_login: approver.login,
        operation_id: `keel-proposal-${proposal.id}`,
        digest: proposal.evidenceDigestHex,
      }),
    ]);
  });

  it('applies the rules in order and commits only the audit event of each refusal', async () => {
    const execution = await seedStaleExecution(db);
    const proposal = await proposeFor(execution.id);
    const codeOf = async (by: typeof approver, input: Parameters<typeof confirmTakeover>[2]) => {
      const result = await confirmTakeover(deps, by, input);
      return result.ok ? 'OK' : result.error.code;
    };
    // A digest that is not one never reaches the service: the action's schema refuses it.
    const confirmThroughAction = actionAs(db, approver, confirmTakeoverSchema, 'recovery.confirm', (who, input) =>
      confirmTakeover(deps, who, input),
    );
    const notHex = { ...confirmInput(proposal), expectedVersion: proposal.expectedVersion ?? 0, evidenceDigest: 'x' };
    expect(await confirmThroughAction(notHex)).toMatchObject({
      ok: false,
      code: 'INVALID_INPUT',
      fieldErrors: { evidenceDigest: expect.any(Array) },
    });
    expect(await codeOf(approver, { ...confirmInput(proposal), proposalId: 987_654 })).toBe('PROPOSAL_NOT_FOUND');
    expect(await codeOf(operator, confirmInput(proposal))).toBe('FOUR_EYES_REQUIRED');
    expect(await codeOf(actor('operator'), confirmInput(proposal))).toBe('FORBIDDEN');
    expect(await codeOf(actor('support'), confirmInput(proposal))).toBe('FORBIDDEN');
    expect(await codeOf(approver, { ...confirmInput(proposal), evidenceDigest: 'ab'.repeat(32) })).toBe(
      'RECOVERY_EVIDENCE_STALE',
    );
    expect(await codeOf(approver, { ...confirmInput(proposal), expectedVersion: 3 })).toBe('RECOVERY_EVIDENCE_STALE');
    expect(await codeOf(approver, { ...confirmInput(proposal), resultingStatus: undefined })).toBe('INVALID_INPUT');
    // None of those changed the proposal or the execution.
    expect(await proposalStatus(proposal.id)).toEqual({ status: 'PENDING', decider_login: null });
    const { rows } = await pool.query('select status, version from oxide_batch.ob_job_execution where id = $1', [
      execution.id,
    ]);
    expect(rows[0]).toEqual({ status: 'STARTED', version: 7 });
    expect((await auditOf(execution.id, 'recovery.confirm')).map((e) => e.code)).toEqual([
      'FOUR_EYES_REQUIRED',
      'FORBIDDEN',
      'FORBIDDEN',
      'RECOVERY_EVIDENCE_STALE',
      'RECOVERY_EVIDENCE_STALE',
      'INVALID_INPUT',
    ]);
    expect(await codeOf(approver, confirmInput(proposal))).toBe('OK');
  });

  it('reports a decision before four eyes or the deadline, and never reopens a decided proposal', async () => {
    const execution = await seedStaleExecution(db);
    const proposal = await proposeFor(execution.id);
    expect((await confirmTakeover(deps, approver, confirmInput(proposal))).ok).toBe(true);
    await pool.query(
      `update keel.recovery_proposal set wait_deadline = decided_at - interval '1 second' where id = $1`,
      [proposal.id],
    );
    for (const by of [operator, actor('viewer'), actor('approver')]) {
      const result = await confirmTakeover(deps, by, confirmInput(proposal));
      expect(result).toMatchObject({
        ok: false,
        error: {
          code: 'PROPOSAL_DECIDED',
          message: `Proposal ${proposal.id} was already approved by ${approver.login}.`,
        },
      });
    }
    expect(await proposalStatus(proposal.id)).toEqual({ status: 'APPROVED', decider_login: approver.login });
  });

  it('holds admins to four eyes too', async () => {
    const admin = actor('admin');
    const execution = await seedStaleExecution(db);
    const proposal = await proposeFor(execution.id, admin);
    const own = await confirmTakeover(deps, admin, confirmInput(proposal));
    expect(own.ok ? 'OK' : own.error.code).toBe('FOUR_EYES_REQUIRED');
    const other = await confirmTakeover(deps, actor('admin'), confirmInput(proposal));
    expect(other.ok).toBe(true);
  });

  it('supersedes the proposal when the execution moved, committing that status change with the refusal', async () => {
    const execution = await seedStaleExecution(db);
    const proposal = await proposeFor(execution.id);
    // The owner wakes up: a heartbeat moves updated_at (and nothing else).
    await pool.query(
      `update oxide_batch.ob_job_execution set updated_at = updated_at + interval '1 second' where id = $1`,
      [execution.id],
    );
    const result = await confirmTakeover(deps, approver, confirmInput(proposal));
    expect(result).toMatchObject({ ok: false, error: { code: 'RECOVERY_EVIDENCE_STALE' } });
    expect(await proposalStatus(proposal.id)).toEqual({ status: 'SUPERSEDED', decider_login: approver.login });
    const { rows } = await pool.query('select status from oxide_batch.ob_job_execution where id = $1', [execution.id]);
    expect(rows[0].status).toBe('STARTED');
    const decided = await confirmTakeover(deps, actor('approver'), confirmInput(proposal));
    expect(decided).toMatchObject({
      ok: false,
      error: {
        code: 'PROPOSAL_DECIDED',
        message: `Proposal ${proposal.id} was already superseded by ${approver.login}.`,
      },
    });
  });

  it('asks to acknowledge ambiguous effects and for UNKNOWN_EFFECT before failing an unknown commit', async () => {
    const execution = await seedStaleExecution(db, { status: 'UNKNOWN', deliveryMode: 'at_least_once' });
    const proposal = await proposeFor(execution.id);
    expect(proposal.evidence).toMatchObject({ markers: { unknownCommit: true, ambiguousExternalEffect: true } });
    const attempt = async (input: Partial<Parameters<typeof confirmTakeover>[2]>) => {
      const result = await confirmTakeover(deps, approver, { ...confirmInput(proposal), ...input });
      return result.ok ? 'OK' : result.error.code;
    };
    expect(await attempt({})).toBe('ACKNOWLEDGEMENT_REQUIRED');
    expect(await attempt({ acknowledged: true })).toBe('UNRESOLVED_RECOVERY_REQUIRED');
    expect(await attempt({ acknowledged: true, reasonCode: 'OPERATOR_CONFIRMED' })).toBe(
      'UNRESOLVED_RECOVERY_REQUIRED',
    );
    expect(await attempt({ acknowledged: true, resultingStatus: 'ABANDONED' })).toBe('OK');
    const { rows } = await pool.query(
      'select status, ended_at is not null as ended from oxide_batch.ob_job_execution where id = $1',
      [execution.id],
    );
    expect(rows[0]).toEqual({ status: 'ABANDONED', ended: true });
  });

  it('accepts FAILED for an unknown commit with reason UNKNOWN_EFFECT and the approver category', async () => {
    const execution = await seedStaleExecution(db, { status: 'UNKNOWN', deliveryMode: 'atomic_same_resource' });
    const proposal = await proposeFor(execution.id);
    const result = await confirmTakeover(deps, approver, {
      ...confirmInput(proposal),
      acknowledged: true,
      reasonCode: 'UNKNOWN_EFFECT',
      failureCategory: 'UNKNOWN_COMMIT',
    });
    expect(result.ok).toBe(true);
    const { rows } = await pool.query(
      'select failure_category, failure_id from oxide_batch.ob_job_execution where id = $1',
      [execution.id],
    );
    expect(rows[0]).toEqual({ failure_category: 'UNKNOWN_COMMIT', failure_id: proposal.id });
  });

  it('expires a proposal past its deadline on the confirm that finds it, and refuses cancelled ones', async () => {
    const execution = await seedStaleExecution(db);
    const proposal = await proposeFor(execution.id);
    await expireDeadline(db, proposal.id);
    const late = await confirmTakeover(deps, approver, confirmInput(proposal));
    expect(late).toMatchObject({ ok: false, error: { code: 'PROPOSAL_EXPIRED' } });
    expect(await proposalStatus(proposal.id)).toEqual({ status: 'EXPIRED', decider_login: null });
    const again = await confirmTakeover(deps, approver, confirmInput(proposal));
    expect(again).toMatchObject({ ok: false, error: { code: 'PROPOSAL_EXPIRED' } });

    await pool.query(`update keel.recovery_proposal set status = 'CANCELLED' where id = $1`, [proposal.id]);
    const cancelled = await confirmTakeover(deps, approver, confirmInput(proposal));
    expect(cancelled).toMatchObject({ ok: false, error: { code: 'PROPOSAL_CANCELLED' } });
  });
});

describe('proposeRecovery: the reason for the request', () => {
  const proposeThroughAction = actionAs(db, operator, proposeTakeoverSchema, 'recovery.propose', (who, input) =>
    proposeRecovery(deps, who, input),
  );

  it('is required: an empty, blank or too long reason is refused, audited, and creates no proposal', async () => {
    const execution = await seedStaleExecution(db);
    const since = Number((await pool.query('select coalesce(max(id), 0)::int as id from keel.audit_event')).rows[0].id);
    for (const [reason, message] of [
      ['', 'Say why the takeover is needed: the approver reads it before deciding.'],
      ['   ', 'Say why the takeover is needed: the approver reads it before deciding.'],
      ['x'.repeat(501), 'At most 500 characters.'],
    ]) {
      const result = await proposeThroughAction({ target: 'batch', executionId: execution.id, reason: reason! });
      expect(result).toMatchObject({ ok: false, code: 'INVALID_INPUT', fieldErrors: { reason: [message] } });
    }
    const count = await pool.query('select count(*)::int as n from keel.recovery_proposal where target_id = $1', [
      String(execution.id),
    ]);
    expect(count.rows[0].n).toBe(0);
    const refusals = await pool.query(
      `select outcome, code, reason from keel.audit_event where id > $1 and action = 'recovery.propose' order by id`,
      [since],
    );
    expect(refusals.rows).toEqual(
      Array.from({ length: 3 }, () => ({
        outcome: 'REFUSED',
        code: 'INVALID_INPUT',
        reason: 'Invalid input: reason.',
      })),
    );
  });

  it('is stored trimmed on the proposal, read back for the approver, and audited with the request', async () => {
    const execution = await seedStaleExecution(db);
    const result = await proposeThroughAction({
      target: 'batch',
      executionId: execution.id,
      reason: '  worker host lost power\n ',
    });
    if (!result.ok) throw new Error(result.code);
    expect(result.value.proposal.note).toBe('worker host lost power');
    expect((await readProposal(db, result.value.proposal.id))?.note).toBe('worker host lost power');
    expect(await auditOf(execution.id, 'recovery.propose')).toEqual([
      expect.objectContaining({ outcome: 'APPLIED', reason: 'worker host lost power' }),
    ]);
  });
});
