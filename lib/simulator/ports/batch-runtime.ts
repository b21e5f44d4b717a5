import type { BatchStatus, FailureCategory, OwnerObservation } from '../../domain/batch-status';
import type { Result } from '../../domain/result';

/**
 * An execution as its owner last wrote it. Every write names all of it and is applied
 * only while the row still matches (optimistic), so an owner that lost the row to a
 * stop request, a recovery decision or another process finds out instead of
 * overwriting it.
 */
export interface OwnedExecution {
  executionId: number;
  version: number;
  status: BatchStatus;
  /** The owner process's 16 random bytes: written and compared in SQL, never read back. */
  ownerToken: Uint8Array;
  /**
   * Whether a stop was requested, as the execution write that returned this saw it. A
   * stop request leaves the version alone (the runtime's STOP), so the owner's writes
   * keep succeeding and this is how it learns of one.
   */
  stopRequested?: boolean;
}

/** A step execution as its owner last wrote it; guarded like the execution. */
export interface OwnedStep {
  stepExecutionId: number;
  jobExecutionId: number;
  version: number;
  status: BatchStatus;
}

export interface DefinitionRegistration {
  jobName: string;
  definitionRevision: string;
  manifestFormat: number;
  manifest: unknown;
  /** 64 lowercase hex digits: the digest retry keys are derived under. */
  manifestDigestHex: string;
}

export interface RegisteredDefinition {
  id: number;
  jobName: string;
  definitionRevision: string;
  manifestDigestHex: string;
}

export interface NewInstance {
  jobName: string;
  /** 32 bytes identifying the instance within its job. */
  instanceKey: Uint8Array;
  identifyingParameters: Record<string, unknown>;
}

export interface NewExecution {
  jobInstanceId: number;
  definitionId: number;
  /** 1 for a launch; a restart is the restarted execution's attempt plus one. */
  attempt: number;
  /** Set for a restart: the STOPPED or FAILED execution of the same instance it continues. */
  restartOfExecutionId: number | null;
  parameters: Record<string, unknown>;
  ownerToken: Uint8Array;
}

/** The step's committed checkpoint: its descriptor and payload, written together. */
export interface StepCheckpoint {
  format: number;
  schema: string;
  schemaVersion: number;
  payload: unknown;
}

/** What one chunk added to the step's counters; every count is a whole number >= 0. */
export interface ChunkCounts {
  read: number;
  processed: number;
  written: number;
  filtered: number;
  readSkips: number;
  processSkips: number;
  writeSkips: number;
}

/** FAILED needs a failure; the other moves take none. */
export interface StatusMove {
  to: BatchStatus;
  failure?: { category: FailureCategory; id: number } | null;
}

export interface ExecutionObservation {
  status: BatchStatus;
  version: number;
  stopRequested: boolean;
  /** The given token against `owner_token`, compared in SQL. */
  owner: OwnerObservation;
}

export type BatchRuntimeError =
  /** The job name and revision are registered with another manifest digest. */
  | { kind: 'DefinitionMismatch' }
  | { kind: 'InstanceExists' }
  /** The attempt is taken, or the instance already has an unresolved execution. */
  | { kind: 'DuplicateExecution' }
  /** The restarted execution is not STOPPED or FAILED on that instance, or the instance is on hold. */
  | { kind: 'NotRestartable' }
  | { kind: 'DuplicateStep' }
  | { kind: 'IllegalTransition'; from: BatchStatus; to: BatchStatus }
  /** The row moved on: its version, status or owner is not what the writer last wrote. */
  | { kind: 'Conflict' }
  | { kind: 'InvalidWrite'; reason: string }
  | { kind: 'Unavailable' };

export type BatchRuntimeErrorOf<K extends BatchRuntimeError['kind']> = Extract<BatchRuntimeError, { kind: K }>;

/**
 * The writes a batch runtime makes to `oxide_batch` as it runs its jobs
 * (docs/design.md#runtime-schema): registering definitions, launching and restarting executions, moving them
 * through the legal statuses, heartbeating, and creating, committing and finishing
 * steps. Keel itself never runs jobs; the demo runtime uses this port to behave like
 * the real runtime, so the console meets the rows and races a real one produces.
 * Retry reservations are the FaultStateStore's; a chunk commit that advances the
 * checkpoint runs `clearResolved` in the same transaction.
 */
export interface BatchRuntime {
  /** Registers a definition, or returns the one already registered under its name and revision. */
  registerDefinition(
    registration: DefinitionRegistration,
  ): Promise<Result<RegisteredDefinition, BatchRuntimeErrorOf<'DefinitionMismatch' | 'InvalidWrite' | 'Unavailable'>>>;
  createInstance(
    instance: NewInstance,
  ): Promise<Result<{ jobInstanceId: number }, BatchRuntimeErrorOf<'InstanceExists' | 'InvalidWrite' | 'Unavailable'>>>;
  /** A new STARTING execution owned by `ownerToken`. */
  createExecution(
    execution: NewExecution,
  ): Promise<
    Result<
      OwnedExecution,
      BatchRuntimeErrorOf<'DuplicateExecution' | 'NotRestartable' | 'InvalidWrite' | 'Unavailable'>
    >
  >;
  /** One legal in-place move (docs/design.md#execution-statuses); resolving moves set `ended_at` and the exit code. */
  moveExecution(
    execution: OwnedExecution,
    move: StatusMove,
  ): Promise<
    Result<OwnedExecution, BatchRuntimeErrorOf<'IllegalTransition' | 'Conflict' | 'InvalidWrite' | 'Unavailable'>>
  >;
  /** Proof of life: `updated_at` and the version move, nothing else. */
  heartbeat(
    execution: OwnedExecution,
  ): Promise<Result<OwnedExecution, BatchRuntimeErrorOf<'Conflict' | 'InvalidWrite' | 'Unavailable'>>>;
  /** What became of an execution after a write found it moved on; null when it does not exist. */
  observeExecution(
    executionId: number,
    ownerToken: Uint8Array,
  ): Promise<Result<ExecutionObservation | null, BatchRuntimeErrorOf<'InvalidWrite' | 'Unavailable'>>>;
  /** A STARTED step of a STARTED execution, with its opening checkpoint. */
  startStep(
    execution: OwnedExecution,
    step: { stepName: string; stepLogicalId: string; checkpoint: StepCheckpoint },
  ): Promise<Result<OwnedStep, BatchRuntimeErrorOf<'DuplicateStep' | 'Conflict' | 'InvalidWrite' | 'Unavailable'>>>;
  /** Adds one chunk's counts and one commit, and replaces the checkpoint. */
  commitChunk(
    step: OwnedStep,
    chunk: { counts: ChunkCounts; checkpoint: StepCheckpoint },
  ): Promise<Result<OwnedStep, BatchRuntimeErrorOf<'Conflict' | 'InvalidWrite' | 'Unavailable'>>>;
  moveStep(
    step: OwnedStep,
    move: StatusMove,
  ): Promise<Result<OwnedStep, BatchRuntimeErrorOf<'IllegalTransition' | 'Conflict' | 'InvalidWrite' | 'Unavailable'>>>;
}
