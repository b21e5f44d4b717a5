import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { postgresBatchRuntime } from '../../lib/simulator/adapters/batch-runtime';
import { postgresCheckpointStore } from '../../lib/adapters/checkpoint-store';
import { postgresRecoveryRepository } from '../../lib/adapters/recovery-repository';
import { postgresTakeoverUnitOfWork } from '../../lib/adapters/takeover-unit-of-work';
import { parseSettings } from '../../lib/config/settings';
import { DEMO_DRIVERS, startDemoRuntime } from '../../lib/demo/runtime';
import { checkpointDigestHex, DEMO_DEFINITIONS } from '../../lib/demo/seed-batch';
import { seedDemo } from '../../lib/demo/seed';
import { fromCanonicalJson, validateFor } from '../../lib/domain/fault-state';
import { evaluateCandidate } from '../../lib/domain/recovery';
import { requestStop } from '../../lib/services/request-stop';
import { freshDatabase } from '../support/database';
import { actor } from '../support/recovery-fixtures';

const { pool, db } = await freshDatabase();
const KEY = 'cd'.repeat(32);
const STALE_THRESHOLD_MS = 60_000;
// Long enough for the first silent owner (the first launch) to pass the one-minute threshold.
const RUN_MS = 70_000;
const SAMPLE_MS = 7_000;

const parsed = parseSettings({
  KEEL_DEMO: '1',
  KEEL_CHECKPOINT_KEY: KEY,
  KEEL_STALE_THRESHOLD_MS: String(STALE_THRESHOLD_MS),
  KEEL_ORCHESTRATION_LEASE_MS: '6000',
});
if (!parsed.ok) throw new Error('settings');
const settings = parsed.value;

const scalar = async (text: string, params: unknown[] = []) => Number((await pool.query(text, params)).rows[0].n);

interface Invariants {
  execution_end_mismatch: number;
  step_end_mismatch: number;
  doubly_unresolved: number;
  both_places: number;
  partial_leases: number;
  finished: number;
}

/** Rules the runtime's rows must keep at every instant, across seeded and new rows alike. */
async function invariants() {
  const { rows } = await pool.query(`
    select (select count(*)::int from oxide_batch.ob_job_execution
             where (ended_at is null) <> (status in ('STARTING','STARTED','STOPPING','UNKNOWN'))) as
             execution_end_mismatch,
           (select count(*)::int from oxide_batch.ob_step_execution
             where (ended_at is null) <> (status in ('STARTING','STARTED','STOPPING','UNKNOWN'))) as step_end_mismatch,
           (select count(*)::int from (select job_instance_id from oxide_batch.ob_job_execution
             where status in ('STARTING','STARTED','STOPPING','UNKNOWN') group by 1
             having count(*) > 1) d) as doubly_unresolved,
           (select count(*)::int from settle.attempts a join settle.dead_letters d using (receipt_id)) as both_places,
           (select count(*)::int from settle.attempts
             where num_nonnulls(lease_owner, lease_token, lease_until_ms) not in (0, 3)) as partial_leases,
           (select count(*)::int from keel.settlement_event where kind = 'finished') as finished`);
  return rows[0] as Invariants;
}

interface Baseline {
  maxExecutionId: number;
  maxStepId: number;
  corruptStepIds: number[];
  orchestrationIds: string[];
}

async function corruptStepIds(): Promise<number[]> {
  const { rows } = await pool.query(`
    select id, fault_state_format, fault_state_schema, fault_state_schema_version, fault_state_payload,
    fault_state_checksum
    from oxide_batch.ob_step_execution order by id`);
  return rows
    .filter(
      (row) =>
        !fromCanonicalJson({
          formatId: row.fault_state_schema,
          formatVersion: row.fault_state_format,
          schemaVersion: row.fault_state_schema_version,
          payload: row.fault_state_payload,
          checksum: row.fault_state_checksum,
        }).ok,
    )
    .map((row) => Number(row.id));
}

const newOrchestrations = async (baseline: Baseline) =>
  (
    await pool.query(
      `select execution_id, fencing_token, lease_expires_at_ms, lease_owner from keel.durable_checkpoint
                     where not (execution_id = any($1)) order by execution_id`,
      [baseline.orchestrationIds],
    )
  ).rows;

const activeNewExecutions = async (baseline: Baseline) =>
  (
    await pool.query(
      `select id, version, status, (extract(epoch from updated_at) * 1000)::bigint as updated_ms
                     from oxide_batch.ob_job_execution
                     where id > $1 and status in ('STARTING','STARTED','STOPPING') order by id`,
      [baseline.maxExecutionId],
    )
  ).rows;

let baseline: Baseline;
const samples: Invariants[] = [];
const tokenSamples: Map<string, number>[] = [];
let candidatesWhileRunning = 0;
let stopRequestedId: number | null = null;
let activeMidRun = new Map<number, number>();
let stopStartedAt = 0;
const lines: string[] = [];

describe('demo runtime: batch executions and orchestrations', () => {
  beforeAll(async () => {
    expect(await seedDemo(db, settings)).toBe(true);
    baseline = {
      maxExecutionId: await scalar('select max(id) as n from oxide_batch.ob_job_execution'),
      maxStepId: await scalar('select max(id) as n from oxide_batch.ob_step_execution'),
      corruptStepIds: await corruptStepIds(),
      orchestrationIds: (await pool.query('select execution_id from keel.durable_checkpoint')).rows.map(
        (r) => r.execution_id,
      ),
    };
    const store = postgresCheckpointStore(db, Buffer.from(KEY, 'hex'));
    const runtime = startDemoRuntime({
      db,
      settings,
      log: (level, message, fields) => lines.push(`${level} ${message} ${JSON.stringify(fields ?? {})}`),
    });
    try {
      for (let elapsed = SAMPLE_MS; elapsed <= RUN_MS; elapsed += SAMPLE_MS) {
        await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS));
        samples.push(await invariants());
        tokenSamples.push(
          new Map((await newOrchestrations(baseline)).map((r) => [r.execution_id, Number(r.fencing_token)])),
        );
        const page = await store.takeoverCandidates({ limit: 100 });
        candidatesWhileRunning = Math.max(
          candidatesWhileRunning,
          page.candidates.filter((c) => !baseline.orchestrationIds.includes(c.executionId)).length,
        );
        if (elapsed === 4 * SAMPLE_MS) {
          // An operator's stop request on a live execution: one whose version moves between two reads.
          const before = new Map((await activeNewExecutions(baseline)).map((r) => [Number(r.id), Number(r.version)]));
          await new Promise((resolve) => setTimeout(resolve, 1_500));
          const live = (await activeNewExecutions(baseline)).filter(
            (r) => before.has(Number(r.id)) && Number(r.version) > before.get(Number(r.id))!,
          );
          // The first that is still active when the request lands (one may finish in between).
          for (const row of live) {
            // The runtime's STOP: the version stays, so the worker learns of it from its next write.
            const requested = await requestStop(
              { unitOfWork: postgresTakeoverUnitOfWork(db, { checkpointKey: randomBytes(32) }) },
              actor('operator', 'operator'),
              {
                executionId: Number(row.id),
                operationId: `demo-stop-${row.id}`,
              },
            );
            if (requested.ok && requested.value.changed) {
              stopRequestedId = Number(row.id);
              break;
            }
          }
        }
        if (elapsed === RUN_MS - 5 * SAMPLE_MS) {
          activeMidRun = new Map(
            (await activeNewExecutions(baseline)).map((r) => [Number(r.id), Number(r.updated_ms)]),
          );
        }
      }
    } finally {
      stopStartedAt = Date.now();
      await runtime.stop();
    }
  }, RUN_MS + 90_000);

  it('runs the batch and orchestration drivers by default', () => {
    expect(DEMO_DRIVERS.map((driver) => driver.name)).toEqual([
      'settlement',
      'batch',
      'orchestration',
      'seeded',
      'runtime-ops',
      'support',
    ]);
    expect(lines.some((line) => line.startsWith('info demo batch executions stopped'))).toBe(true);
    expect(lines.some((line) => line.startsWith('info demo orchestrations stopped'))).toBe(true);
    const problems = lines.filter((line) => /^(warn|error) /.test(line) && /batch|orchestrat|runtime/.test(line));
    expect(problems).toEqual([]);
  });

  it('keeps every runtime and settlement invariant while it runs, and settlements keep moving', () => {
    expect(samples.length).toBe(RUN_MS / SAMPLE_MS);
    for (const sample of samples) {
      expect(sample).toMatchObject({
        execution_end_mismatch: 0,
        step_end_mismatch: 0,
        doubly_unresolved: 0,
        both_places: 0,
        partial_leases: 0,
      });
    }
    expect(samples.at(-1)!.finished).toBeGreaterThan(samples[0]!.finished);
  });

  it('launches new executions of the demo definitions and completes most of them', async () => {
    const { rows } = await pool.query(
      `select e.status, count(*)::int as n,
              count(*) filter (where e.owner_token is null or octet_length(e.owner_token) <> 16)::int as without_owner,
              count(*) filter (where e.failure_category is not null and e.failure_id is not null)::int as with_failure
       from oxide_batch.ob_job_execution e where e.id > $1 group by 1`,
      [baseline.maxExecutionId],
    );
    const byStatus = Object.fromEntries(rows.map((r) => [r.status, r]));
    const total = rows.reduce((sum, r) => sum + r.n, 0);
    expect(total).toBeGreaterThanOrEqual(15);
    expect(byStatus.COMPLETED?.n ?? 0).toBeGreaterThan(total / 3);
    for (const row of rows) expect(row.without_owner).toBe(0);
    // Exactly the FAILED ones carry a failure.
    for (const row of rows) expect(row.with_failure).toBe(row.status === 'FAILED' ? row.n : 0);
    const names = (
      await pool.query(
        `select distinct d.job_name from oxide_batch.ob_job_execution e join oxide_batch.ob_job_definition d
         on d.id = e.definition_id where e.id > $1`,
        [baseline.maxExecutionId],
      )
    ).rows.map((r) => r.job_name);
    expect(names.every((name) => DEMO_DEFINITIONS.some((plan) => plan.jobName === name))).toBe(true);
    // A restart is the next attempt of a STOPPED or FAILED execution of the same instance.
    const restarts = await pool.query(
      `select count(*)::int as n from oxide_batch.ob_job_execution e
       left join oxide_batch.ob_job_execution p on p.id = e.restart_of_execution_id
       where e.id > $1 and e.attempt > 1
         and (p.id is null or p.job_instance_id <> e.job_instance_id or p.attempt <> e.attempt - 1
         or p.status not in ('STOPPED','FAILED','ABANDONED'))`,
      [baseline.maxExecutionId],
    );
    expect(restarts.rows[0].n).toBe(0);
  });

  it('advances steps chunk by chunk: every commit moved the checkpoint one chunk on', async () => {
    const { rows } = await pool.query(
      `select s.status, s.commit_count, s.read_count, s.checkpoint_payload, s.read_retry_count, s.process_retry_count,
              s.write_retry_count, s.rollback_count
       from oxide_batch.ob_step_execution s where s.id > $1`,
      [baseline.maxStepId],
    );
    expect(rows.length).toBeGreaterThanOrEqual(20);
    expect(rows.filter((r) => r.status === 'COMPLETED' && r.commit_count >= 2).length).toBeGreaterThan(5);
    for (const row of rows) {
      expect(row.checkpoint_payload).toEqual({ chunk: row.commit_count, offset: row.read_count });
      expect(row.rollback_count).toBe(row.read_retry_count + row.process_retry_count + row.write_retry_count);
    }
    const retries = rows.reduce((sum, r) => sum + r.rollback_count, 0);
    expect(retries).toBeGreaterThan(3);
  });

  it('writes only valid fault-state envelopes tied to the checkpoint, cleared by the commit advancing it', async () => {
    expect(await corruptStepIds()).toEqual(baseline.corruptStepIds);
    expect(baseline.corruptStepIds.length).toBeGreaterThan(0);
    const { rows } = await pool.query(
      `select s.status, s.step_logical_id, d.job_name, s.checkpoint_payload, s.fault_state_format, s.fault_state_schema,
              s.fault_state_schema_version, s.fault_state_payload, s.fault_state_checksum
       from oxide_batch.ob_step_execution s
       join oxide_batch.ob_job_execution e on e.id = s.job_execution_id
       join oxide_batch.ob_job_definition d on d.id = e.definition_id
       where s.id > $1`,
      [baseline.maxStepId],
    );
    let retained = 0;
    for (const row of rows) {
      const envelope = fromCanonicalJson({
        formatId: row.fault_state_schema,
        formatVersion: row.fault_state_format,
        schemaVersion: row.fault_state_schema_version,
        payload: row.fault_state_payload,
        checksum: row.fault_state_checksum,
      });
      expect(envelope.ok).toBe(true);
      if (!envelope.ok) continue;
      if (row.status === 'COMPLETED') expect(envelope.value.entries).toEqual([]);
      if (envelope.value.entries.length === 0) continue;
      retained += 1;
      const plan = DEMO_DEFINITIONS.find((p) => p.jobName === row.job_name)!.steps.find(
        (s) => s.logicalId === row.step_logical_id,
      )!;
      expect(
        validateFor(envelope.value, plan.retryLimit!, plan.stateLimit!, checkpointDigestHex(row.checkpoint_payload)),
      ).toEqual({ ok: true, value: undefined });
    }
    // Unresolved keys outlive only a step that stopped mid-retry (failed, stopped, silent or UNKNOWN).
    expect(retained).toBeLessThan(rows.length / 2);
  });

  it('leaves UNKNOWN executions, and silent owners whose executions turn stale under the threshold', async () => {
    const unknown = await pool.query(
      `select count(*)::int as n from oxide_batch.ob_job_execution where id > $1 and status = 'UNKNOWN'
       and ended_at is null`,
      [baseline.maxExecutionId],
    );
    expect(unknown.rows[0].n).toBeGreaterThanOrEqual(1);
    // After a graceful stop, an execution still active was abandoned by a silent owner while the runtime ran.
    const silent = await activeNewExecutions(baseline);
    expect(silent.length).toBeGreaterThanOrEqual(1);
    for (const row of silent) {
      expect(Number(row.updated_ms)).toBeLessThan(stopStartedAt - 3_000);
      // Seen active half a minute before the end, and not written since.
      if (activeMidRun.has(Number(row.id))) expect(Number(row.updated_ms)).toBe(activeMidRun.get(Number(row.id)));
    }
    expect(silent.some((row) => activeMidRun.has(Number(row.id)))).toBe(true);
    const repository = postgresRecoveryRepository(db);
    const verdicts = [];
    for (const row of silent) {
      const readStartedMonoMs = performance.now();
      const snapshot = await repository.recoverySnapshot(Number(row.id), randomBytes(16));
      const readFinishedMonoMs = performance.now();
      if (!snapshot.ok) throw new Error(snapshot.error.kind);
      expect(snapshot.value.owner).toBe('OTHER_PROCESS');
      verdicts.push(
        evaluateCandidate(snapshot.value, {
          thresholdMs: settings.staleThresholdMs,
          maxSkewMs: settings.maxClockSkewMs,
          lastServerTimeMs: null,
          readStartedMonoMs,
          readFinishedMonoMs,
          localWallMs: Date.now(),
        }),
      );
    }
    // The first launch's owner went silent within seconds, so it has been inactive past the minute.
    expect(verdicts.some((v) => v.ok && v.value.inactivityMs > STALE_THRESHOLD_MS)).toBe(true);
    for (const verdict of verdicts) {
      if (!verdict.ok) expect(verdict.error).toMatchObject({ kind: 'NotStale', thresholdMs: STALE_THRESHOLD_MS });
    }
  });

  it('honours an operator stop request: the execution winds down to STOPPED', async () => {
    expect(stopRequestedId).not.toBeNull();
    const { rows } = await pool.query(
      `select status, stop_requested_by, ended_at is not null as ended from oxide_batch.ob_job_execution where id = $1`,
      [stopRequestedId],
    );
    expect(rows[0]).toEqual({ status: 'STOPPED', stop_requested_by: 'operator', ended: true });
  });

  it('renews orchestration leases with newer tokens, completes nodes, and lets some lapse', async () => {
    const created = await newOrchestrations(baseline);
    expect(created.length).toBeGreaterThanOrEqual(4);
    expect(created.every((r) => r.lease_owner.startsWith('demo-orchestrator-'))).toBe(true);
    const first = tokenSamples.find((sample) => sample.size > 0)!;
    const last = tokenSamples.at(-1)!;
    const increased = [...first].filter(([id, token]) => (last.get(id) ?? 0) > token);
    expect(increased.length).toBeGreaterThan(0);
    // Tokens only ever rise between samples.
    for (let i = 1; i < tokenSamples.length; i += 1) {
      for (const [id, token] of tokenSamples[i - 1]!) expect(tokenSamples[i]!.get(id)).toBeGreaterThanOrEqual(token);
    }
    expect(candidatesWhileRunning).toBeGreaterThanOrEqual(1);

    const store = postgresCheckpointStore(db, Buffer.from(KEY, 'hex'));
    let nodesBeyondStart = 0;
    for (const id of [...baseline.orchestrationIds, ...created.map((r) => r.execution_id)]) {
      const loaded = await store.load(id);
      if (!loaded.ok || !loaded.value) throw new Error(`checkpoint ${id} did not load`);
      expect(store.verify(loaded.value.checkpoint)).toBe(true);
      if (!baseline.orchestrationIds.includes(id) && loaded.value.checkpoint.completedNodeIds.length > 1)
        nodesBeyondStart += 1;
    }
    expect(nodesBeyondStart).toBeGreaterThan(0);
  });

  it('agrees with what the drivers counted, figure for figure', async () => {
    const tally = (message: string) => {
      const line = lines.find((l) => l.startsWith(`info ${message} `));
      if (!line) throw new Error(`no "${message}" line`);
      return JSON.parse(line.slice(`info ${message} `.length)) as Record<string, number>;
    };
    const batch = tally('demo batch executions stopped');
    const orchestration = tally('demo orchestrations stopped');
    const settlement = tally('demo settlement workers stopped');
    const { rows } = await pool.query(
      `select (select count(*)::int from oxide_batch.ob_job_execution where id > $1) as launched,
              (select count(*)::int from oxide_batch.ob_job_execution where id > $1
              and status = 'COMPLETED') as completed,
              (select count(*)::int from oxide_batch.ob_job_execution where id > $1 and status = 'FAILED') as failed,
              (select count(*)::int from oxide_batch.ob_job_execution where id > $1 and attempt > 1) as restarted,
              (select coalesce(sum(commit_count), 0)::int from oxide_batch.ob_step_execution where id > $2) as chunks,
              (select coalesce(sum(rollback_count), 0)::int from oxide_batch.ob_step_execution
              where id > $2) as retries`,
      [baseline.maxExecutionId, baseline.maxStepId],
    );
    const db = rows[0];
    expect(batch).toMatchObject({
      launched: db.launched,
      completed: db.completed,
      failed: db.failed,
      restarted: db.restarted,
      chunks: db.chunks,
      lost: 0,
    });
    // Every reservation the workers counted bumped exactly one step's rollback count.
    expect(batch.retriesReserved).toBe(db.retries);
    expect(batch.silent).toBeGreaterThanOrEqual(1);
    expect(batch.unknown).toBeGreaterThanOrEqual(1);
    expect(orchestration.renewed).toBeGreaterThan(orchestration.created!);
    expect(orchestration.lapsed).toBeGreaterThanOrEqual(1);
    expect(orchestration.refused).toBe(0);
    expect(settlement.finished).toBeGreaterThan(0);
    console.info(
      `[measure] demo runtime ${RUN_MS / 1000}s: ${batch.launched} executions started (${batch.restarted} restarts), ` +
        `${batch.completed} completed, ${batch.failed} failed, ${batch.stopped} stopped, ` +
        `${batch.unknown} left UNKNOWN, ` +
        `${batch.silent} silent owners; ${batch.chunks} chunk commits, ${batch.retriesReserved} retries reserved ` +
        `(${batch.retriesResolved} resolved, ${batch.capacityExhausted} capacity-exhausted); ` +
        `${orchestration.created} orchestrations created, ${orchestration.renewed} lease renewals, ` +
        `${orchestration.nodesCompleted} nodes completed, ${orchestration.lapsed} lapsed ` +
        `(${candidatesWhileRunning} takeover candidates seen while running); ` +
        `${settlement.finished} settlements finished`,
    );
  });

  it('never logs an owner token, a retry key or a receipt id', () => {
    const text = lines.join('\n');
    expect(text).not.toMatch(/[0-9a-f]{32}/);
    expect(text).not.toMatch(/rcpt_|token/i);
  });
});

describe('BatchRuntime over Postgres: the guards the demo relies on', () => {
  const runtime = postgresBatchRuntime(db);
  const checkpoint = (chunk: number) => ({
    format: 1,
    schema: 'oxide-batch.checkpoint',
    schemaVersion: 1,
    payload: { chunk, offset: chunk * 10 },
  });
  const counts = { read: 10, processed: 10, written: 9, filtered: 1, readSkips: 0, processSkips: 0, writeSkips: 0 };
  const value = <T>(result: { ok: true; value: T } | { ok: false; error: unknown }): T => {
    if (!result.ok) throw new Error(`unexpected ${JSON.stringify(result.error)}`);
    return result.value;
  };

  async function launched(token = randomBytes(16)) {
    const definition = value(
      await runtime.registerDefinition({
        jobName: 'guard-job',
        definitionRevision: 'r1',
        manifestFormat: 1,
        manifest: { job_name: 'guard-job', steps: [] },
        manifestDigestHex: '7'.repeat(64),
      }),
    );
    const { jobInstanceId } = value(
      await runtime.createInstance({ jobName: 'guard-job', instanceKey: randomBytes(32), identifyingParameters: {} }),
    );
    const execution = value(
      await runtime.createExecution({
        jobInstanceId,
        definitionId: definition.id,
        attempt: 1,
        restartOfExecutionId: null,
        parameters: {},
        ownerToken: token,
      }),
    );
    return { definition, jobInstanceId, execution, token };
  }

  it('registers a definition once and refuses the same name and revision under another digest', async () => {
    const { definition } = await launched();
    const again = {
      jobName: 'guard-job',
      definitionRevision: 'r1',
      manifestFormat: 1,
      manifest: {},
      manifestDigestHex: '7'.repeat(64),
    };
    expect(value(await runtime.registerDefinition(again)).id).toBe(definition.id);
    expect(await runtime.registerDefinition({ ...again, manifestDigestHex: '8'.repeat(64) })).toEqual({
      ok: false,
      error: { kind: 'DefinitionMismatch' },
    });
  });

  it('launches STARTING at version 0 and refuses a second unresolved execution or a bad restart', async () => {
    const { definition, jobInstanceId, execution, token } = await launched();
    expect(execution).toMatchObject({ status: 'STARTING', version: 0 });
    const second = {
      jobInstanceId,
      definitionId: definition.id,
      attempt: 2,
      restartOfExecutionId: execution.executionId,
      parameters: {},
      ownerToken: token,
    };
    // Not restartable while it is STARTING.
    expect(await runtime.createExecution(second)).toEqual({ ok: false, error: { kind: 'NotRestartable' } });
    const failed = value(
      await runtime.moveExecution(execution, { to: 'FAILED', failure: { category: 'TIMEOUT', id: 7 } }),
    );
    const restarted = value(await runtime.createExecution(second));
    expect(restarted).toMatchObject({ status: 'STARTING', version: 0 });
    expect(await runtime.createExecution(second)).toEqual({ ok: false, error: { kind: 'DuplicateExecution' } });
    const { rows } = await pool.query(
      `select status, exit_code, failure_category, failure_id, ended_at is not null as ended
       from oxide_batch.ob_job_execution where id = $1`,
      [failed.executionId],
    );
    expect(rows[0]).toEqual({
      status: 'FAILED',
      exit_code: 'FAILED',
      failure_category: 'TIMEOUT',
      failure_id: 7,
      ended: true,
    });
  });

  it('moves only along legal transitions, and only from the version, status and owner it last wrote', async () => {
    const { execution, token } = await launched();
    expect(await runtime.moveExecution(execution, { to: 'COMPLETED' })).toEqual({
      ok: false,
      error: { kind: 'IllegalTransition', from: 'STARTING', to: 'COMPLETED' },
    });
    expect((await runtime.moveExecution(execution, { to: 'FAILED' })).ok).toBe(false);
    expect(await runtime.moveExecution({ ...execution, ownerToken: randomBytes(16) }, { to: 'STARTED' })).toEqual({
      ok: false,
      error: { kind: 'Conflict' },
    });
    const started = value(await runtime.moveExecution(execution, { to: 'STARTED' }));
    expect(started).toMatchObject({ status: 'STARTED', version: 1 });
    expect(await runtime.heartbeat(execution)).toEqual({ ok: false, error: { kind: 'Conflict' } });
    const beat = value(await runtime.heartbeat(started));
    expect(beat.version).toBe(2);
    const seen = value(await runtime.observeExecution(beat.executionId, token));
    expect(seen).toEqual({ status: 'STARTED', version: 2, stopRequested: false, owner: 'CURRENT_PROCESS' });
    expect(value(await runtime.observeExecution(beat.executionId, randomBytes(16)))?.owner).toBe('OTHER_PROCESS');
    const stopped = await requestStop(
      { unitOfWork: postgresTakeoverUnitOfWork(db, { checkpointKey: randomBytes(32) }) },
      actor('operator', 'operator'),
      {
        executionId: beat.executionId,
        operationId: `stop-${beat.executionId}`,
      },
    );
    expect(stopped).toMatchObject({ ok: true, value: { version: 2, changed: true } });
    // The runtime's STOP leaves the version: the owner's next write still succeeds and carries the request.
    expect(value(await runtime.heartbeat(beat))).toMatchObject({ version: 3, stopRequested: true });
    expect(value(await runtime.observeExecution(beat.executionId, token))).toMatchObject({
      stopRequested: true,
      version: 3,
    });
  });

  it('starts steps only under a STARTED execution it owns, and commits chunks under the step version', async () => {
    const { execution } = await launched();
    expect(
      await runtime.startStep(execution, { stepName: 'load', stepLogicalId: 'load', checkpoint: checkpoint(0) }),
    ).toEqual({ ok: false, error: { kind: 'Conflict' } });
    const started = value(await runtime.moveExecution(execution, { to: 'STARTED' }));
    const step = value(
      await runtime.startStep(started, { stepName: 'load', stepLogicalId: 'load', checkpoint: checkpoint(0) }),
    );
    expect(step).toMatchObject({ status: 'STARTED', version: 0, jobExecutionId: started.executionId });
    expect(
      await runtime.startStep(started, { stepName: 'load', stepLogicalId: 'load', checkpoint: checkpoint(0) }),
    ).toEqual({ ok: false, error: { kind: 'DuplicateStep' } });
    const committed = value(await runtime.commitChunk(step, { counts, checkpoint: checkpoint(1) }));
    expect(committed.version).toBe(1);
    expect(await runtime.commitChunk(step, { counts, checkpoint: checkpoint(2) })).toEqual({
      ok: false,
      error: { kind: 'Conflict' },
    });
    expect(
      (await runtime.commitChunk(committed, { counts: { ...counts, read: -1 }, checkpoint: checkpoint(2) })).ok,
    ).toBe(false);
    const done = value(await runtime.moveStep(committed, { to: 'COMPLETED' }));
    expect(done).toMatchObject({ status: 'COMPLETED', version: 2 });
    const { rows } = await pool.query(
      `select read_count, write_count, filter_count, commit_count, checkpoint_payload, exit_code,
       ended_at is not null as ended
       from oxide_batch.ob_step_execution where id = $1`,
      [step.stepExecutionId],
    );
    expect(rows[0]).toEqual({
      read_count: 10,
      write_count: 9,
      filter_count: 1,
      commit_count: 1,
      checkpoint_payload: { chunk: 1, offset: 10 },
      exit_code: 'COMPLETED',
      ended: true,
    });
  });
});
