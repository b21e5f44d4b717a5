import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { proposeAbandonSchema, requestStopSchema } from '../../app/actions/recovery-schemas';
import { postgresBatchRuntime } from '../../lib/simulator/adapters/batch-runtime';
import { proposeAbandon } from '../../lib/services/abandon-execution';
import { confirmTakeover } from '../../lib/services/confirm-takeover';
import { proposeRecovery } from '../../lib/services/propose-recovery';
import { requestStop } from '../../lib/services/request-stop';
import { actionAs } from '../support/actions';
import { freshDatabase } from '../support/database';
import { actor, recoveryDeps, seedStaleExecution } from '../support/recovery-fixtures';

const { db, pool } = await freshDatabase();
const deps = recoveryDeps(db);
const operator = actor('operator');
const approver = actor('approver', 'approver.one@example.com');
const approver2 = actor('approver', 'approver.two@example.com');

/**
 * The runtime's `request_digest` written out by hand from the canonical writer's rules
 * (docs/design.md#canonical-writer; request.rs): a u64 big-endian length before every string, an
 * optional u64 as 0x01 then 8 bytes, and no arguments as the string NONE.
 */
function independentRequestDigest(
  action: string,
  executionId: number,
  expectedVersion: number,
  reason: string,
): string {
  const str = (value: string) => {
    const bytes = Buffer.from(value, 'utf8');
    const length = Buffer.alloc(8);
    length.writeBigUInt64BE(BigInt(bytes.length));
    return Buffer.concat([length, bytes]);
  };
  const version = Buffer.alloc(9);
  version[0] = 1;
  version.writeBigUInt64BE(BigInt(expectedVersion), 1);
  const bytes = Buffer.concat([
    str('oxide-batch.operator-request.v1'),
    str(action),
    str(`execution:${executionId}`),
    version,
    str(reason),
    str('NONE'),
  ]);
  return createHash('sha256').update(bytes).digest('hex');
}

const executionRow = async (id: number) =>
  (await pool.query('select * from oxide_batch.ob_job_execution where id = $1', [id])).rows[0];
const requestRows = async (id: number) =>
  (await pool.query('select * from oxide_batch.ob_operator_request where job_execution_id = $1 order by id', [id]))
    .rows;
const codeOf = (result: { ok: boolean; error?: { code: string } }) => (result.ok ? 'OK' : result.error!.code);
const isWholeMs = (value: Date | null) => value === null || value.getTime() % 1 === 0;
const subMs = async (id: number, column: string) =>
  Number(
    (
      await pool.query(
        `select (extract(microseconds from ${column})::bigint % 1000) as us from oxide_batch.ob_job_execution
         where id = $1`,
        [id],
      )
    ).rows[0].us,
  );

describe('request stop as the runtime STOP', () => {
  it('keeps the version, writes one STOP request with the runtime digest; a worker on the old one writes', async () => {
    const ownerToken = randomBytes(16);
    const execution = await seedStaleExecution(db, { status: 'STARTED', version: 12, ownerToken });
    const before = await executionRow(execution.id);
    const operationId = `op-${randomBytes(4).toString('hex')}`;
    const result = await requestStop(deps, operator, { executionId: execution.id, operationId });
    expect(result).toMatchObject({
      ok: true,
      value: { executionId: execution.id, version: 12, changed: true, firstRequest: true },
    });

    const after = await executionRow(execution.id);
    expect(after.version).toBe(12);
    expect(after.status).toBe('STARTED');
    expect(after.stop_requested_by).toBe(operator.login);
    // updated_at = greatest(updated_at, requested): the seeded row is 20 minutes old, so it moves to the request.
    expect(after.updated_at.getTime()).toBe(after.stop_requested_at.getTime());
    expect(after.updated_at.getTime()).toBeGreaterThan(before.updated_at.getTime());
    expect(await subMs(execution.id, 'stop_requested_at')).toBe(0);

    const requests = await requestRows(execution.id);
    expect(requests).toHaveLength(1);
    const [request] = requests;
    expect(request).toMatchObject({
      job_instance_id: execution.jobInstanceId,
      action: 'STOP',
      authorization_class: 'LIFECYCLE',
      // Keel's requests are told from the runtime CLI's by their prefix.
      operation_id: `keel-stop-${operationId}`,
      actor_ref: operator.login,
      reason_code: null,
      observed_version: 12,
      prior_status: 'STARTED',
      result_status: 'STARTED',
      outcome_class: 'APPLIED',
      rejection_code: null,
    });
    expect(request.request_digest.toString('hex')).toBe(independentRequestDigest('STOP', execution.id, 12, ''));
    expect(isWholeMs(request.requested_at)).toBe(true);
    expect(
      (
        await pool.query(
          `select (extract(microseconds from requested_at)::bigint % 1000) as us from oxide_batch.ob_operator_request
           where id = $1`,
          [request.id],
        )
      ).rows[0].us,
    ).toEqual(0);

    // The worker that owns it writes with the version it last wrote, and that still succeeds.
    const runtime = postgresBatchRuntime(db);
    const beat = await runtime.heartbeat({ executionId: execution.id, version: 12, status: 'STARTED', ownerToken });
    expect(beat).toMatchObject({ ok: true, value: { version: 13, stopRequested: true } });

    const audit = (
      await pool.query(
        `select outcome, operation_id, digest from keel.audit_event where action = 'execution.request_stop'
         and target_id = $1`,
        [String(execution.id)],
      )
    ).rows;
    expect(audit).toEqual([
      { outcome: 'APPLIED', operation_id: operationId, digest: request.request_digest.toString('hex') },
    ]);
  });

  it('is idempotent by operation id, and a repeat on STOPPING or a finished execution changes nothing', async () => {
    const execution = await seedStaleExecution(db, { status: 'STARTED', version: 3 });
    const operationId = `op-${randomBytes(4).toString('hex')}`;
    const [first, second] = await Promise.all([
      requestStop(deps, operator, { executionId: execution.id, operationId }),
      requestStop(deps, operator, { executionId: execution.id, operationId }),
    ]);
    expect([first, second].filter((r) => r.ok && r.value.firstRequest)).toHaveLength(1);
    expect([first, second].every((r) => r.ok)).toBe(true);
    expect(await requestRows(execution.id)).toHaveLength(1);
    // The same operation id for another execution is a conflict, and writes no runtime row.
    const other = await seedStaleExecution(db, { status: 'STARTED' });
    expect(codeOf(await requestStop(deps, operator, { executionId: other.id, operationId }))).toBe(
      'OPERATION_ID_CONFLICT',
    );
    expect(await requestRows(other.id)).toHaveLength(0);

    for (const status of ['STOPPING', 'FAILED', 'COMPLETED'] as const) {
      const seeded = await seedStaleExecution(db, {
        status,
        version: 5,
        failure: status === 'FAILED' ? { category: 'TIMEOUT', id: 1 } : null,
      });
      const before = await executionRow(seeded.id);
      const repeat = await requestStop(deps, operator, {
        executionId: seeded.id,
        operationId: `op-${status}-${seeded.id}`,
      });
      expect(repeat).toMatchObject({ ok: true, value: { changed: false, version: 5 } });
      expect(await executionRow(seeded.id)).toEqual(before);
      expect(await requestRows(seeded.id)).toMatchObject([
        { action: 'STOP', outcome_class: 'APPLIED', prior_status: status, result_status: status, observed_version: 5 },
      ]);
    }
  });

  it('records an UNKNOWN execution as a REJECTED STOP with INVALID_STATE, as the runtime does', async () => {
    const execution = await seedStaleExecution(db, { status: 'UNKNOWN', version: 4 });
    const before = await executionRow(execution.id);
    expect(
      codeOf(await requestStop(deps, operator, { executionId: execution.id, operationId: `op-u-${execution.id}` })),
    ).toBe('INVALID_STATE');
    expect(await executionRow(execution.id)).toEqual(before);
    const [request] = await requestRows(execution.id);
    expect(request).toMatchObject({
      job_instance_id: null,
      action: 'STOP',
      outcome_class: 'REJECTED',
      rejection_code: 'INVALID_STATE',
      prior_status: null,
      result_status: null,
      observed_version: 4,
    });
    expect(request.request_digest.toString('hex')).toBe(independentRequestDigest('STOP', execution.id, 4, ''));
    expect(codeOf(await requestStop(deps, approver, { executionId: execution.id, operationId: 'x-1' }))).toBe(
      'FORBIDDEN',
    );
    const stopThroughAction = actionAs(db, operator, requestStopSchema, 'execution.request_stop', (who, input) =>
      requestStop(deps, who, input),
    );
    expect(await stopThroughAction({ executionId: execution.id, operationId: 'not valid!' })).toMatchObject({
      ok: false,
      code: 'INVALID_INPUT',
      fieldErrors: { operationId: expect.any(Array) },
    });
    expect(codeOf(await requestStop(deps, operator, { executionId: 987_654, operationId: 'x-2' }))).toBe(
      'EXECUTION_NOT_FOUND',
    );
  });
});

describe('abandon through four eyes (the runtime ABANDON)', () => {
  it('abandons a FAILED execution once a second approver confirms, writing exactly the runtime rows', async () => {
    const execution = await seedStaleExecution(db, {
      status: 'FAILED',
      version: 9,
      failure: { category: 'TIMEOUT', id: 77 },
    });
    const before = await executionRow(execution.id);
    const endedMs = async () =>
      Number(
        (
          await pool.query(
            'select (extract(epoch from ended_at) * 1000)::bigint as ms from oxide_batch.ob_job_execution ' +
              'where id = $1',
            [execution.id],
          )
        ).rows[0].ms,
      );
    const endedBeforeMs = await endedMs();
    expect(codeOf(await proposeAbandon(deps, operator, { executionId: execution.id }))).toBe('FORBIDDEN');
    // Without a reason nothing is proposed: the approver would have nothing to weigh.
    const abandonThroughAction = actionAs(
      db,
      approver,
      proposeAbandonSchema,
      'execution.abandon.propose',
      (who, input) => proposeAbandon(deps, who, input),
    );
    expect(await abandonThroughAction({ executionId: execution.id, note: '  ' })).toMatchObject({
      ok: false,
      code: 'REASON_REQUIRED',
    });
    expect(codeOf(await proposeAbandon(deps, approver, { executionId: execution.id }))).toBe('REASON_REQUIRED');
    const proposed = await proposeAbandon(deps, approver, { executionId: execution.id, note: 'poison input' });
    expect(proposed.ok && proposed.value.proposal.note).toBe('poison input');
    if (!proposed.ok) throw new Error(proposed.error.code);
    const proposal = proposed.value.proposal;
    expect(proposal).toMatchObject({ kind: 'ABANDON', status: 'PENDING', expectedVersion: 9 });
    // A takeover request for the same execution meets the pending abandon.
    expect(
      codeOf(
        await proposeRecovery(deps, operator, { target: 'batch', reason: 'owner silent', executionId: execution.id }),
      ),
    ).toBe('PROPOSAL_PENDING');

    const input = { proposalId: proposal.id, evidenceDigest: proposal.evidenceDigestHex, expectedVersion: 9 };
    expect(codeOf(await confirmTakeover(deps, approver, input))).toBe('FOUR_EYES_REQUIRED');
    expect(codeOf(await confirmTakeover(deps, operator, input))).toBe('FORBIDDEN');
    expect(await requestRows(execution.id)).toHaveLength(0);
    const confirmed = await confirmTakeover(deps, approver2, input);
    expect(confirmed).toMatchObject({
      ok: true,
      value: { kind: 'abandon', resultingStatus: 'ABANDONED', version: 10, changed: true },
    });

    const after = await executionRow(execution.id);
    expect(after.status).toBe('ABANDONED');
    expect(after.version).toBe(10);
    // ended_at kept (it was set), updated_at the request's whole-millisecond instant; exit code and failure kept.
    // ended_at is written back as the runtime read it: its rounded milliseconds.
    expect(await endedMs()).toBe(endedBeforeMs);
    expect(await subMs(execution.id, 'ended_at')).toBe(0);
    expect(await subMs(execution.id, 'updated_at')).toBe(0);
    for (const column of [
      'exit_code',
      'failure_category',
      'failure_id',
      'owner_token',
      'stop_requested_at',
      'attempt',
    ]) {
      expect(after[column]).toEqual(before[column]);
    }
    const requests = await requestRows(execution.id);
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({
      job_instance_id: execution.jobInstanceId,
      action: 'ABANDON',
      authorization_class: 'DESTRUCTIVE',
      operation_id: `keel-proposal-${proposal.id}`,
      actor_ref: approver2.login,
      reason_code: 'OPERATOR_CONFIRMED',
      observed_version: 9,
      prior_status: 'FAILED',
      result_status: 'ABANDONED',
      outcome_class: 'APPLIED',
      rejection_code: null,
    });
    expect(requests[0].request_digest.toString('hex')).toBe(
      independentRequestDigest('ABANDON', execution.id, 9, 'OPERATOR_CONFIRMED'),
    );
    expect(requests[0].requested_at.getTime()).toBe(after.updated_at.getTime());
    expect(
      (
        await pool.query(
          'select count(*)::int as n from oxide_batch.ob_recovery_decision where job_execution_id = $1',
          [execution.id],
        )
      ).rows[0].n,
    ).toBe(0);
    const proposalRow = (
      await pool.query(
        'select status, decider_login, resulting_status, kind from keel.recovery_proposal where id = $1',
        [proposal.id],
      )
    ).rows[0];
    expect(proposalRow).toEqual({
      status: 'APPROVED',
      decider_login: approver2.login,
      resulting_status: 'ABANDONED',
      kind: 'ABANDON',
    });
    const audit = (
      await pool.query(`select action, outcome, code from keel.audit_event where operation_id = $1 order by id`, [
        `keel-proposal-${proposal.id}`,
      ])
    ).rows;
    expect(audit.map((row) => `${row.action}:${row.code ?? row.outcome}`)).toEqual([
      'execution.abandon.propose:APPLIED',
      'recovery.confirm:FOUR_EYES_REQUIRED',
      'recovery.confirm:FORBIDDEN',
      'execution.abandon:APPLIED',
    ]);
  });

  it('refuses an UNKNOWN execution without a recovery decision, and allows it after one', async () => {
    const execution = await seedStaleExecution(db, { status: 'UNKNOWN', version: 2 });
    expect(codeOf(await proposeAbandon(deps, approver, { executionId: execution.id, note: 'unknown for a day' }))).toBe(
      'UNRESOLVED_RECOVERY_REQUIRED',
    );
    expect(await requestRows(execution.id)).toHaveLength(0);
    for (const status of ['STARTED', 'COMPLETED', 'ABANDONED'] as const) {
      const seeded = await seedStaleExecution(db, { status });
      expect(codeOf(await proposeAbandon(deps, approver, { executionId: seeded.id, note: 'not wanted' }))).toBe(
        'INVALID_STATE',
      );
    }

    // With a decision on record (an earlier version), UNKNOWN may be abandoned.
    await pool.query(
      `insert into oxide_batch.ob_recovery_decision (job_execution_id, execution_version, prior_status,
       resulting_status, reason_code,
         operator_reference, evidence_digest, decided_at)
       values ($1, 1, 'STARTED', 'FAILED', 'OPERATOR_CONFIRMED', 'cli', $2,
       date_trunc('milliseconds', clock_timestamp()))`,
      [execution.id, randomBytes(32)],
    );
    const proposed = await proposeAbandon(deps, approver, {
      executionId: execution.id,
      note: 'input rejected upstream',
    });
    if (!proposed.ok) throw new Error(proposed.error.code);
    const { proposal } = proposed.value;

    // The decision goes away before the confirmation (the evidence digest does not bind it):
    // the runtime's guard then refuses, recorded as a REJECTED ABANDON request.
    await pool.query('delete from oxide_batch.ob_recovery_decision where job_execution_id = $1', [execution.id]);
    const input = { proposalId: proposal.id, evidenceDigest: proposal.evidenceDigestHex, expectedVersion: 2 };
    expect(codeOf(await confirmTakeover(deps, approver2, input))).toBe('UNRESOLVED_RECOVERY_REQUIRED');
    expect((await executionRow(execution.id)).status).toBe('UNKNOWN');
    expect(await requestRows(execution.id)).toMatchObject([
      {
        action: 'ABANDON',
        outcome_class: 'REJECTED',
        rejection_code: 'UNRESOLVED_RECOVERY_REQUIRED',
        job_instance_id: null,
        prior_status: null,
        observed_version: 2,
      },
    ]);
  });

  it('supersedes the proposal when the execution changed before the confirmation', async () => {
    const execution = await seedStaleExecution(db, { status: 'STOPPED', version: 4 });
    const proposed = await proposeAbandon(deps, approver, {
      executionId: execution.id,
      note: 'input rejected upstream',
    });
    if (!proposed.ok) throw new Error(proposed.error.code);
    await pool.query('update oxide_batch.ob_job_execution set version = version + 1 where id = $1', [execution.id]);
    const result = await confirmTakeover(deps, approver2, {
      proposalId: proposed.value.proposal.id,
      evidenceDigest: proposed.value.proposal.evidenceDigestHex,
      expectedVersion: 4,
    });
    expect(result).toMatchObject({ ok: false, error: { code: 'RECOVERY_EVIDENCE_STALE' } });
    // Superseded, not merely refused: the proposal is closed.
    expect(
      (await pool.query('select status from keel.recovery_proposal where id = $1', [proposed.value.proposal.id]))
        .rows[0],
    ).toEqual({
      status: 'SUPERSEDED',
    });
    expect((await executionRow(execution.id)).status).toBe('STOPPED');
    expect(await requestRows(execution.id)).toHaveLength(0);
  });
});
