import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { obOperatorRequest } from '../../lib/db/schema/oxide-batch';
import { CanonicalWriter } from '../../lib/domain/canonical-writer';
import { readExecutionDetail } from '../../lib/queries/execution-detail';
import { readOperatorHistory } from '../../lib/queries/operator-history';
import { operatorRequestRows } from '../../lib/demo/seed-operator-requests';
import { confirmTakeover } from '../../lib/services/confirm-takeover';
import { proposeRecovery } from '../../lib/services/propose-recovery';
import { freshDatabase } from '../support/database';
import { actor, recoveryDeps, seedStaleExecution } from '../support/recovery-fixtures';

const { db, pool } = await freshDatabase();
const ownerToken = Buffer.alloc(16, 9);
const deps = recoveryDeps(db, { ownerToken });

/** A request row as the runtime's CLI writes it, at `minutesAgo` by the database's clock. */
async function cliRequest(row: {
  instanceId: number;
  executionId: number;
  action: string;
  operationId: string;
  outcome?: 'APPLIED' | 'REJECTED';
  rejection?: string;
  version?: number | null;
  prior?: string | null;
  result?: string | null;
  minutesAgo: number;
  digestByte?: number;
}) {
  const klass = row.action === 'ABANDON' || row.action === 'RECOVER' ? 'DESTRUCTIVE' : 'LIFECYCLE';
  await pool.query(
    `insert into oxide_batch.ob_operator_request (job_instance_id, job_execution_id, action, authorization_class,
     operation_id, actor_ref,
       reason_code, request_digest, observed_version, prior_status, result_status, outcome_class, rejection_code,
       requested_at)
     values ($1, $2, $3, $4, $5, 'cli:ops', null, $6, $7, $8, $9, $10, $11,
             date_trunc('milliseconds', clock_timestamp()) - $12 * interval '1 minute')`,
    [
      row.instanceId,
      row.executionId,
      row.action,
      klass,
      row.operationId,
      Buffer.alloc(32, row.digestByte ?? 1),
      row.version ?? null,
      row.prior ?? null,
      row.result ?? null,
      row.outcome ?? 'APPLIED',
      row.rejection ?? null,
      row.minutesAgo,
    ],
  );
}

describe('operator history of an execution', () => {
  it('lists each request for the execution newest first, Keel and runtime CLI apart, no owner token', async () => {
    const workerToken = randomBytes(16);
    const execution = await seedStaleExecution(db, { ownerToken: workerToken, silentForMs: 3 * 60 * 60_000 });
    const other = await seedStaleExecution(db);
    const base = { instanceId: execution.jobInstanceId, executionId: execution.id };
    await cliRequest({
      ...base,
      action: 'LAUNCH',
      operationId: `launch-${execution.id}`,
      result: 'STARTING',
      minutesAgo: 240,
    });
    await cliRequest({
      ...base,
      action: 'STOP',
      operationId: `stop-${execution.id}-1`,
      outcome: 'REJECTED',
      rejection: 'OPTIMISTIC_CONFLICT',
      version: 5,
      minutesAgo: 200,
      digestByte: 2,
    });
    // Two rows at one instant: the later id comes first.
    await cliRequest({
      ...base,
      action: 'STOP',
      operationId: `stop-${execution.id}-2`,
      outcome: 'REJECTED',
      rejection: 'INVALID_STATE',
      version: 7,
      minutesAgo: 100,
      digestByte: 3,
    });
    await cliRequest({
      ...base,
      action: 'STOP',
      operationId: `stop-${execution.id}-3`,
      outcome: 'REJECTED',
      rejection: 'INVALID_STATE',
      version: 7,
      minutesAgo: 100,
      digestByte: 4,
    });
    await cliRequest({
      instanceId: other.jobInstanceId,
      executionId: other.id,
      action: 'LAUNCH',
      operationId: `launch-${other.id}`,
      result: 'STARTING',
      minutesAgo: 50,
    });

    // A takeover through Keel writes the RECOVER request, the newest of all.
    const proposed = await proposeRecovery(deps, actor('operator'), {
      target: 'batch',
      reason: 'owner silent',
      executionId: execution.id,
    });
    if (!proposed.ok) throw new Error(proposed.error.code);
    const { proposal } = proposed.value;
    const approver = actor('approver', 'ada.approver');
    const confirmed = await confirmTakeover(deps, approver, {
      proposalId: proposal.id,
      evidenceDigest: proposal.evidenceDigestHex,
      expectedVersion: proposal.expectedVersion,
      resultingStatus: 'FAILED',
    });
    expect(confirmed.ok).toBe(true);

    const history = await readOperatorHistory(db, execution.id);
    expect(history.map((r) => r.operationId)).toEqual([
      `keel-proposal-${proposal.id}`,
      `stop-${execution.id}-3`,
      `stop-${execution.id}-2`,
      `stop-${execution.id}-1`,
      `launch-${execution.id}`,
    ]);
    expect(history.map((r) => r.origin)).toEqual(['keel', 'runtime', 'runtime', 'runtime', 'runtime']);
    expect(history[0]).toMatchObject({
      action: 'RECOVER',
      authorizationClass: 'DESTRUCTIVE',
      actorRef: 'ada.approver',
      outcome: 'APPLIED',
      rejectionCode: null,
      observedVersion: proposal.expectedVersion,
      priorStatus: 'STARTED',
      resultStatus: 'FAILED',
      reasonCode: 'OPERATOR_CONFIRMED',
    });
    expect(history[0]!.requestDigest).toMatch(/^[0-9a-f]{64}$/);
    expect(history[3]).toMatchObject({
      action: 'STOP',
      authorizationClass: 'LIFECYCLE',
      actorRef: 'cli:ops',
      outcome: 'REJECTED',
      rejectionCode: 'OPTIMISTIC_CONFLICT',
      observedVersion: 5,
      priorStatus: null,
      resultStatus: null,
      requestDigest: '02'.repeat(32),
    });
    expect(history[4]).toMatchObject({
      action: 'LAUNCH',
      observedVersion: null,
      priorStatus: null,
      resultStatus: 'STARTING',
    });
    const times = history.map((r) => Date.parse(r.requestedAt));
    expect([...times].sort((a, b) => b - a)).toEqual(times);

    // The execution detail (page and read API) carries the same list, and no owner token.
    const detail = await readExecutionDetail(db, execution.id, { staleThresholdMs: 900_000, ownerToken });
    expect(detail!.operatorRequests).toEqual(history);
    const serialized = JSON.stringify(detail);
    expect(serialized).not.toContain(workerToken.toString('hex'));
    expect(serialized).not.toContain(ownerToken.toString('hex'));
    expect(Object.keys(history[0]!)).not.toContain('ownerToken');

    expect(await readOperatorHistory(db, other.id)).toHaveLength(1);
    expect(await readOperatorHistory(db, 987_654_321)).toEqual([]);
  });

  it('limits a long history to the newest rows', async () => {
    const execution = await seedStaleExecution(db);
    for (let i = 0; i < 5; i += 1) {
      await cliRequest({
        instanceId: execution.jobInstanceId,
        executionId: execution.id,
        action: 'STOP',
        operationId: `limit-${execution.id}-${i}`,
        outcome: 'REJECTED',
        rejection: 'INVALID_STATE',
        version: 1,
        minutesAgo: 10 - i,
      });
    }
    const newest = await readOperatorHistory(db, execution.id, 2);
    expect(newest.map((r) => r.operationId)).toEqual([`limit-${execution.id}-4`, `limit-${execution.id}-3`]);
  });
});

describe('demo operator requests', () => {
  it('are valid under the runtime table rules, come from the CLI only, carry the runtime request digests', async () => {
    const nowMs = Date.now();
    const hour = 60 * 60_000;
    const plans = [
      { id: 4_000_004, status: 'STARTED' as const, updatedAt: new Date(nowMs - hour) },
      {
        id: 4_000_005,
        status: 'STOPPING' as const,
        updatedAt: new Date(nowMs - hour),
        stopRequestedAt: new Date(nowMs - hour - 1_000),
        stopRequestedBy: 'cli:ops',
      },
      { id: 4_000_006, status: 'ABANDONED' as const, updatedAt: new Date(nowMs - hour) },
      { id: 4_000_008, status: 'UNKNOWN' as const, updatedAt: new Date(nowMs - hour) },
    ];
    const seeded = [];
    for (const plan of plans) {
      const row = await seedStaleExecution(db, {
        id: plan.id,
        status: plan.status,
        updatedAt: plan.updatedAt,
        ownerToken: null,
      });
      const { rows } = await pool.query(
        `select e.definition_id, e.created_at, i.instance_key, d.manifest_digest from oxide_batch.ob_job_execution e
         join oxide_batch.ob_job_instance i on i.id = e.job_instance_id join oxide_batch.ob_job_definition d
         on d.id = e.definition_id where e.id = $1`,
        [plan.id],
      );
      seeded.push({ plan, row, meta: rows[0] });
    }
    const requests = operatorRequestRows({
      definitions: seeded.map((s) => ({ id: Number(s.meta.definition_id), digest: s.meta.manifest_digest })),
      instances: seeded.map((s) => ({ id: s.row.jobInstanceId, jobName: 'x', instanceKey: s.meta.instance_key })),
      executions: seeded.map((s) => ({
        ...s.plan,
        jobInstanceId: s.row.jobInstanceId,
        definitionId: Number(s.meta.definition_id),
        attempt: 1,
        version: 8,
        createdAt: s.meta.created_at,
        restartOfExecutionId: null,
      })),
      nowMs,
    });
    expect(requests.map((r) => `${r.jobExecutionId} ${r.action} ${r.outcomeClass}`)).toEqual([
      '4000004 LAUNCH APPLIED',
      '4000004 STOP REJECTED',
      '4000005 LAUNCH APPLIED',
      '4000005 STOP APPLIED',
      '4000006 LAUNCH APPLIED',
      '4000006 ABANDON APPLIED',
      '4000008 LAUNCH APPLIED',
      '4000008 ABANDON REJECTED',
    ]);
    expect(requests.every((r) => !r.operationId.startsWith('keel-') && r.actorRef.startsWith('cli:'))).toBe(true);
    // The CHECK rules (outcome, rejection code, statuses, digest length) and UNIQUE(action, operation_id) accept them.
    await db.insert(obOperatorRequest).values(requests);
    const stop = (await readOperatorHistory(db, 4_000_005)).find((r) => r.action === 'STOP')!;
    expect(stop).toMatchObject({
      origin: 'runtime',
      actorRef: 'cli:ops',
      outcome: 'APPLIED',
      observedVersion: 7,
      priorStatus: 'STARTED',
      resultStatus: 'STARTED',
    });
    expect({ ok: true, value: stop.requestDigest }).toEqual(
      new CanonicalWriter('oxide-batch.operator-request.v1')
        .string('STOP')
        .string('execution:4000005')
        .optionalU64(7)
        .string('')
        .string('NONE')
        .digestResult(),
    );
    const refused = (await readOperatorHistory(db, 4_000_008)).find((r) => r.action === 'ABANDON')!;
    expect(refused).toMatchObject({
      outcome: 'REJECTED',
      rejectionCode: 'UNRESOLVED_RECOVERY_REQUIRED',
      priorStatus: null,
      resultStatus: null,
    });
    // LAUNCH's digest: operator-request.v1 over the instance key and the definition (the runtime's request.rs).
    const first = seeded[0]!;
    const launch = new CanonicalWriter('oxide-batch.operator-request.v1')
      .string('LAUNCH')
      .string(`instance-key:${(first.meta.instance_key as Buffer).toString('hex')}`)
      .optionalU64(null)
      .string('')
      .string('DEFINITION')
      .string('r1')
      .bytes(first.meta.manifest_digest as Buffer)
      .digestResult();
    expect({
      ok: true,
      value: (await readOperatorHistory(db, 4_000_004)).find((r) => r.action === 'LAUNCH')!.requestDigest,
    }).toEqual(launch);
  });
});
