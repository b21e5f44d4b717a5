import { randomBytes } from 'node:crypto';
import { isActive, type FailureCategory } from '../../domain/batch-status';
import type { Result } from '../../domain/result';
import type { DbOrTx } from '../../db/client';
import type { BatchRuntime, BatchRuntimeError, OwnedExecution, StatusMove } from '../../simulator/ports/batch-runtime';
import type { WorkerLog } from '../../workers/worker-loop';
import type { BatchDemoOptions, BatchTally } from './batch-options';
import { between, dealFate, newInstanceOf, nextFailureId, pick, type DemoDefinition, type Fate } from './batch-plan';
import {
  commitChunk,
  hitFault,
  openStep,
  reserveRetry,
  resolvePending,
  type RunningStep,
  type StepSetback,
} from './batch-step';

export interface BatchWorkerContext {
  db: DbOrTx;
  runtime: BatchRuntime;
  options: BatchDemoOptions;
  tally: BatchTally;
  log: WorkerLog;
  /** The registered demo definitions; empty until registration succeeds. */
  definitions: () => Promise<DemoDefinition[]>;
}

interface Job {
  definition: DemoDefinition;
  jobInstanceId: number;
  execution: OwnedExecution;
  attempt: number;
  stepIndex: number;
  step: RunningStep | null;
  fate: Fate;
  actions: number;
  /** An operator asked it to stop (or the runtime is shutting down): it winds down instead of advancing. */
  stopping: boolean;
  /** Set once it starts failing, so a failure interrupted half-way is finished with the same record. */
  failure: { category: FailureCategory; id: number } | null;
}

interface Restart {
  definition: DemoDefinition;
  jobInstanceId: number;
  executionId: number;
  attempt: number;
  stepIndex: number;
}

/**
 * One runtime process's worth of work: it owns one execution at a time under its own
 * owner token and drives it one action per tick. Every write is guarded; one that finds
 * the row moved on makes the worker look again: a stop request is honoured, while a
 * recovery decision or another owner means the execution is no longer its own.
 */
export class BatchWorker {
  private ownerToken = randomBytes(16);
  private job: Job | null = null;
  private restarts: Restart[] = [];
  private resumeAt = 0;

  constructor(private readonly context: BatchWorkerContext) {}

  /** One action; returns the delay before the next. */
  async tick(): Promise<number> {
    const { options, runtime } = this.context;
    if (!this.job) {
      if (Date.now() < this.resumeAt) return this.resumeAt - Date.now();
      await this.launch();
      return this.job ? between(options.tickMs) : between(options.pauseMs);
    }
    const job = this.job;
    job.actions += 1;
    const wroteExecution = await this.advance(job);
    // Proof of life for the console's staleness rule, whenever the action did not write the execution.
    if (!wroteExecution && this.job === job) await this.write(job, await runtime.heartbeat(job.execution));
    return this.job ? between(options.tickMs) : between(options.pauseMs);
  }

  /** Graceful shutdown: the execution in hand is stopped, so it can be restarted rather than go stale. */
  async shutdown(): Promise<void> {
    for (let attempt = 0; this.job && attempt < 4; attempt += 1) {
      this.job.stopping = true;
      await this.windDown(this.job);
    }
  }

  private async launch(): Promise<void> {
    const { runtime, options, tally } = this.context;
    const definitions = await this.context.definitions();
    if (definitions.length === 0) return;
    const restart = this.restarts.shift();
    const definition = restart?.definition ?? pick(definitions);
    let jobInstanceId = restart?.jobInstanceId;
    let parameters: Record<string, unknown> = restart
      ? { run: `${definition.jobName}-restart-${restart.executionId}` }
      : {};
    if (jobInstanceId === undefined) {
      const fresh = newInstanceOf(definition);
      const created = await runtime.createInstance(fresh.instance);
      if (!created.ok) return this.warn('demo batch instance not created', created.error);
      jobInstanceId = created.value.jobInstanceId;
      parameters = fresh.parameters;
    }
    const attempt = restart ? restart.attempt + 1 : 1;
    const restartOfExecutionId = restart?.executionId ?? null;
    const execution = await runtime.createExecution({
      jobInstanceId,
      definitionId: definition.id,
      attempt,
      restartOfExecutionId,
      parameters,
      ownerToken: this.ownerToken,
    });
    if (!execution.ok) {
      // A restart loses quietly when the execution was resolved (abandoned) or restarted elsewhere first.
      const superseded =
        restart && (execution.error.kind === 'NotRestartable' || execution.error.kind === 'DuplicateExecution');
      return superseded ? undefined : this.warn('demo batch execution not created', execution.error);
    }
    tally.launched += 1;
    if (restart) tally.restarted += 1;
    const fate = dealFate(tally.launched, options.fateCycle, options.failShare);
    this.job = {
      definition,
      jobInstanceId,
      execution: execution.value,
      attempt,
      stepIndex: restart?.stepIndex ?? 0,
      step: null,
      fate,
      actions: 0,
      stopping: false,
      failure: null,
    };
  }

  /** One action; true when it wrote the execution row itself (so no heartbeat is due). */
  private async advance(job: Job): Promise<boolean> {
    const { db, runtime, options, tally } = this.context;
    const { fate } = job;
    if (job.stopping) return this.windDown(job);
    if (job.failure) return this.fail(job, job.failure.category);
    if (job.execution.status === 'STARTING') return this.moveExecution(job, { to: 'STARTED' });
    if (fate.kind === 'silent' && job.actions > fate.afterActions) return this.goSilent();
    if (fate.kind === 'unknown' && job.actions > fate.afterActions) return this.leaveUnknown(job);
    if (!job.step) {
      const opened = await openStep(db, runtime, job.execution, job.definition.steps[job.stepIndex]!, options);
      if (opened.ok) job.step = opened.value;
      else await this.setback(job, opened.error);
      return this.job !== job;
    }
    const step = job.step;
    if (step.pending) {
      // The retry after backoff: it fails again (the next ordinal) or succeeds (the key resolves).
      const again = Math.random() < options.retryFailsShare;
      const retried = again ? await reserveRetry(step, step.pending) : await resolvePending(step);
      if (retried.ok) tally[again ? 'retriesReserved' : 'retriesResolved'] += 1;
      else await this.setback(job, retried.error);
      return this.job !== job;
    }
    if (step.chunksLeft > 0) {
      if (fate.kind === 'fail' && job.actions > fate.afterActions) return this.fail(job, fate.category);
      const faulted = step.faults !== null && Math.random() < options.faultShare;
      const done = faulted
        ? await hitFault(step, job.definition.manifestDigestHex)
        : await commitChunk(db, step, options.itemsPerChunk);
      if (done.ok) tally[faulted ? 'retriesReserved' : 'chunks'] += 1;
      else await this.setback(job, done.error);
      return this.job !== job;
    }
    const completed = await this.moveStep(job, { to: 'COMPLETED' });
    if (!completed) return true;
    job.step = null;
    job.stepIndex += 1;
    if (job.stepIndex < job.definition.steps.length) return false;
    if (await this.moveExecution(job, { to: 'COMPLETED' })) {
      tally.completed += 1;
      this.job = null;
    }
    return true;
  }

  private async fail(job: Job, category: FailureCategory): Promise<boolean> {
    const failure = (job.failure ??= { category, id: nextFailureId() });
    if (job.step?.owned.status === 'STARTED' && !(await this.moveStep(job, { to: 'FAILED', failure }))) return true;
    if (!(await this.moveExecution(job, { to: 'FAILED', failure }))) return true;
    this.context.tally.failed += 1;
    this.finish(job);
    return true;
  }

  /** Honours a stop request: the step stops, then the execution, via STOPPING so the console sees it honoured. */
  private async windDown(job: Job): Promise<boolean> {
    if (job.step?.owned.status === 'STARTED' && !(await this.moveStep(job, { to: 'STOPPED' }))) return true;
    const to = job.execution.status === 'STOPPING' ? 'STOPPED' : 'STOPPING';
    if (!(await this.moveExecution(job, { to }))) return true;
    if (to === 'STOPPED') {
      this.context.tally.stopped += 1;
      this.finish(job);
    }
    return true;
  }

  /** A FAILED or STOPPED execution is let go; the runtime restarts some as the next attempt. */
  private finish(job: Job): void {
    if (Math.random() < this.context.options.restartShare) {
      const stepIndex = Math.min(job.stepIndex, job.definition.steps.length - 1);
      this.restarts.push({
        definition: job.definition,
        jobInstanceId: job.jobInstanceId,
        executionId: job.execution.executionId,
        attempt: job.attempt,
        stepIndex,
      });
    }
    this.job = null;
  }

  /** The owner process dies mid-run: its execution stays active under a token nobody writes again. */
  private goSilent(): boolean {
    this.context.tally.silent += 1;
    this.job = null;
    this.restarts = [];
    this.ownerToken = randomBytes(16);
    this.resumeAt = Date.now() + this.context.options.silentRestartMs;
    return true;
  }

  /** The runtime cannot tell whether its last commit landed: only a recovery decision resolves this one. */
  private async leaveUnknown(job: Job): Promise<boolean> {
    if (job.step?.owned.status === 'STARTED' && !(await this.moveStep(job, { to: 'UNKNOWN' }))) return true;
    if (await this.moveExecution(job, { to: 'UNKNOWN' })) {
      this.context.tally.unknown += 1;
      this.job = null;
    }
    return true;
  }

  private async moveExecution(job: Job, move: StatusMove): Promise<boolean> {
    const moved = await this.write(job, await this.context.runtime.moveExecution(job.execution, move));
    return moved !== null;
  }

  private async moveStep(job: Job, move: StatusMove): Promise<boolean> {
    const step = job.step;
    if (!step) return true;
    const moved = await this.context.runtime.moveStep(step.owned, move);
    if (moved.ok) step.owned = moved.value;
    else await this.setback(job, moved.error);
    return moved.ok;
  }

  /** Applies an execution write: the row as written becomes the one the next write is guarded by. */
  private async write(job: Job, result: Result<OwnedExecution, BatchRuntimeError>): Promise<OwnedExecution | null> {
    if (result.ok) {
      job.execution = result.value;
      // A stop request leaves the version alone, so the write succeeded; it still says so.
      if (result.value.stopRequested === true && isActive(result.value.status)) job.stopping = true;
      return result.value;
    }
    await this.setback(job, result.error);
    return null;
  }

  private async setback(job: Job, error: StepSetback): Promise<void> {
    const { tally } = this.context;
    switch (error.kind) {
      case 'RetriesSpent':
        if (error.capacityExhausted) tally.capacityExhausted += 1;
        await this.fail(job, error.category);
        return;
      case 'FaultState':
        if (error.error.kind === 'StaleReservation') {
          tally.staleReservations += 1;
          return this.reconcile(job);
        }
        this.warn('demo batch fault state refused', error.error);
        // A corrupt or unbound envelope is never retried over: the step fails closed.
        if (error.error.kind !== 'Unavailable') await this.fail(job, 'INVARIANT');
        return;
      case 'Conflict':
        return this.reconcile(job);
      case 'Unavailable':
        // Tried again on the next tick.
        return this.warn('demo batch write failed', error);
      default:
        this.warn('demo batch write refused', error);
        this.job = null;
    }
  }

  /** A guarded write found the row moved: see what it became. */
  private async reconcile(job: Job): Promise<void> {
    const seen = await this.context.runtime.observeExecution(job.execution.executionId, this.ownerToken);
    if (!seen.ok) return this.warn('demo batch execution not observed', seen.error);
    const now = seen.value;
    if (now && now.owner === 'CURRENT_PROCESS' && isActive(now.status) && now.stopRequested) {
      job.execution = { ...job.execution, version: now.version, status: now.status };
      job.stopping = true;
      return;
    }
    // Recovered, taken over or moved by another writer: it is no longer this worker's to drive.
    this.context.tally.lost += 1;
    if (this.job === job) this.job = null;
  }

  private warn(message: string, error: { kind: string; reason?: string }): void {
    this.context.log('warn', message, { error: error.kind, ...(error.reason ? { reason: error.reason } : {}) });
  }
}
