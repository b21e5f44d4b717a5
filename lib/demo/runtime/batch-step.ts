import { postgresBatchRuntime } from '../../simulator/adapters/batch-runtime';
import { postgresFaultStateStore, type PostgresFaultStateStore } from '../../simulator/adapters/fault-state-store';
import type { DbOrTx } from '../../db/client';
import type { FailureCategory, FaultPhase } from '../../domain/batch-status';
import type { FaultStateError } from '../../domain/fault-state';
import { err, ok, type Result } from '../../domain/result';
import { deriveRetryKeyHex } from '../../domain/retry-key';
import type { BatchRuntime, BatchRuntimeError, OwnedExecution, OwnedStep } from '../../simulator/ports/batch-runtime';
import {
  between,
  checkpointOf,
  chunkCounts,
  pick,
  positionDigestHex,
  RETRY_CATEGORIES,
  RETRY_PHASES,
  type ChunkPosition,
  type StepPlan,
} from './batch-plan';

export interface PendingRetry {
  key: string;
  phase: FaultPhase;
  category: FailureCategory;
}

/** A step in progress: its row as last written, its checkpoint, and its retry state. */
export interface RunningStep {
  owned: OwnedStep;
  plan: StepPlan;
  /** Null for a step without a declared fault policy: it keeps no retry state. */
  faults: PostgresFaultStateStore | null;
  position: ChunkPosition;
  chunkItems: number;
  chunksLeft: number;
  /** A reserved retry waiting out its backoff. */
  pending: PendingRetry | null;
}

/** Why a step action did not happen, for the worker to act on. */
export type StepSetback =
  /** The key's retry limit is spent, or the envelope holds the state limit: the step fails. */
  | { kind: 'RetriesSpent'; category: FailureCategory; capacityExhausted: boolean }
  | { kind: 'FaultState'; error: FaultStateError }
  | BatchRuntimeError;

export interface StepShape {
  itemsPerChunk: [number, number];
  chunksPerStep: [number, number];
  classifierRevision: string;
}

/** Creates the step row and, when the step declares a fault policy, binds its retry state. */
export async function openStep(
  db: DbOrTx,
  runtime: BatchRuntime,
  execution: OwnedExecution,
  plan: StepPlan,
  shape: StepShape,
): Promise<Result<RunningStep, StepSetback>> {
  const position = { chunk: 0, offset: 0 };
  const started = await runtime.startStep(execution, {
    stepName: plan.logicalId,
    stepLogicalId: plan.logicalId,
    checkpoint: checkpointOf(position),
  });
  if (!started.ok) return started;
  let faults: PostgresFaultStateStore | null = null;
  if (plan.retryLimit !== undefined && plan.stateLimit !== undefined) {
    faults = postgresFaultStateStore(db);
    const binding = { stepExecutionId: started.value.stepExecutionId, jobExecutionId: started.value.jobExecutionId };
    const bound = await faults.bind({
      ...binding,
      retryStateLimit: plan.stateLimit,
      classifierRevision: shape.classifierRevision,
    });
    if (!bound.ok) return err({ kind: 'FaultState', error: bound.error });
  }
  return ok({
    owned: started.value,
    plan,
    faults,
    position,
    chunkItems: between(shape.itemsPerChunk),
    chunksLeft: between(shape.chunksPerStep),
    pending: null,
  });
}

/**
 * Consumes the next retry ordinal of the key: exactly the stored one plus one, as the
 * store's compare-and-swap demands, and never past the step's retry limit.
 */
export async function reserveRetry(step: RunningStep, fault: PendingRetry): Promise<Result<void, StepSetback>> {
  const faults = step.faults;
  if (!faults) return ok(undefined);
  const stored = await faults.reservedOrdinal(fault.key);
  if (!stored.ok) return err({ kind: 'FaultState', error: stored.error });
  const ordinal = (stored.value ?? 0) + 1;
  if (ordinal > (step.plan.retryLimit ?? 0))
    return err({ kind: 'RetriesSpent', category: fault.category, capacityExhausted: false });
  const reserved = await faults.reserve({ ...fault, ordinal, checkpointDigest: positionDigestHex(step.position) });
  if (!reserved.ok) {
    if (reserved.error.kind === 'CapacityExhausted')
      return err({ kind: 'RetriesSpent', category: fault.category, capacityExhausted: true });
    return err({ kind: 'FaultState', error: reserved.error });
  }
  // The reservation bumped the step's version in its own guarded UPDATE.
  step.owned = { ...step.owned, version: step.owned.version + 1 };
  step.pending = fault;
  return ok(undefined);
}

/** A retryable fault on one item of the chunk: the key names that item under the committed checkpoint. */
export async function hitFault(step: RunningStep, definitionDigestHex: string): Promise<Result<void, StepSetback>> {
  const phase = pick(RETRY_PHASES);
  const key = deriveRetryKeyHex({
    definitionDigest: definitionDigestHex,
    stepName: step.plan.logicalId,
    phase,
    checkpointDigest: positionDigestHex(step.position),
    ordinal: step.position.offset + between([0, step.chunkItems - 1]),
  });
  if (!key.ok) return err({ kind: 'InvalidWrite', reason: key.error.kind });
  return reserveRetry(step, { key: key.value, phase, category: pick(RETRY_CATEGORIES) });
}

/** The retry after backoff succeeded: the key is resolved, in this store only, until the next commit. */
export async function resolvePending(step: RunningStep): Promise<Result<void, StepSetback>> {
  const pending = step.pending;
  if (!pending || !step.faults) return ok(undefined);
  const resolved = await step.faults.resolve(pending.key);
  if (!resolved.ok) return err({ kind: 'FaultState', error: resolved.error });
  step.pending = null;
  return ok(undefined);
}

class RolledBack extends Error {
  constructor(readonly failure: { ok: false; error: StepSetback }) {
    super('commit rolled back');
  }
}

/** Runs `work` in one transaction, rolled back when it returns an error. */
async function atomically<T>(
  db: DbOrTx,
  work: (tx: DbOrTx) => Promise<Result<T, StepSetback>>,
): Promise<Result<T, StepSetback>> {
  try {
    return await db.transaction(async (tx) => {
      const result = await work(tx);
      if (!result.ok) throw new RolledBack(result);
      return result;
    });
  } catch (error) {
    if (error instanceof RolledBack) return error.failure;
    throw error;
  }
}

/**
 * Commits the chunk: counters and the next checkpoint, and in the same transaction the
 * envelope cleared of the resolved keys, which belonged to the checkpoint just superseded.
 */
export async function commitChunk(
  db: DbOrTx,
  step: RunningStep,
  itemsPerChunk: [number, number],
): Promise<Result<void, StepSetback>> {
  const next = { chunk: step.position.chunk + 1, offset: step.position.offset + step.chunkItems };
  const committed = await atomically(db, async (tx) => {
    const written = await postgresBatchRuntime(tx).commitChunk(step.owned, {
      counts: chunkCounts(step.chunkItems),
      checkpoint: checkpointOf(next),
    });
    if (!written.ok || !step.faults) return written;
    const cleared = await step.faults.on(tx).clearResolved();
    return cleared.ok ? written : err({ kind: 'FaultState' as const, error: cleared.error });
  });
  if (!committed.ok) return committed;
  Object.assign(step, {
    owned: committed.value,
    position: next,
    chunkItems: between(itemsPerChunk),
    chunksLeft: step.chunksLeft - 1,
  });
  return ok(undefined);
}
