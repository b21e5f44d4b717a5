/** The runtime's execution and step lifecycle vocabulary (docs/design.md#execution-statuses). */
export const BATCH_STATUSES = [
  'STARTING',
  'STARTED',
  'STOPPING',
  'STOPPED',
  'FAILED',
  'COMPLETED',
  'ABANDONED',
  'UNKNOWN',
] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

/** The statuses the runtime's STOP takes a request in (its `stop` guard). */
export const STOP_REQUESTABLE_STATUSES = ['STARTING', 'STARTED'] as const satisfies readonly BatchStatus[];

export const ACTIVE_STATUSES = ['STARTING', 'STARTED', 'STOPPING'] as const satisfies readonly BatchStatus[];
export const FINISHED_STATUSES = [
  'STOPPED',
  'FAILED',
  'COMPLETED',
  'ABANDONED',
] as const satisfies readonly BatchStatus[];
export const TERMINAL_STATUSES = ['COMPLETED', 'ABANDONED'] as const satisfies readonly BatchStatus[];
/** At most one execution per instance may be in one of these (the runtime's partial unique index). */
export const UNRESOLVED_STATUSES = [
  'STARTING',
  'STARTED',
  'STOPPING',
  'UNKNOWN',
] as const satisfies readonly BatchStatus[];

export type ActiveStatus = (typeof ACTIVE_STATUSES)[number];
export type UnresolvedStatus = (typeof UNRESOLVED_STATUSES)[number];

const includes = <T extends string>(list: readonly T[], value: unknown): value is T =>
  typeof value === 'string' && (list as readonly string[]).includes(value);

export const isBatchStatus = (value: unknown): value is BatchStatus => includes(BATCH_STATUSES, value);
export const isActive = (status: BatchStatus): status is ActiveStatus => includes(ACTIVE_STATUSES, status);
export const isFinished = (status: BatchStatus): boolean => includes(FINISHED_STATUSES, status);
export const isTerminal = (status: BatchStatus): boolean => includes(TERMINAL_STATUSES, status);
export const isUnresolved = (status: BatchStatus): status is UnresolvedStatus => includes(UNRESOLVED_STATUSES, status);

/**
 * Stale: active and not updated for longer than the threshold, both times by the
 * runtime's epoch-ms expression (NaN is never stale). lib/db/sql/stale-execution.ts is
 * the same rule in SQL, held equal by test/integration/rule-fragments.test.ts.
 */
export const isStaleExecution = (status: BatchStatus, inactivityMs: number, thresholdMs: number): boolean =>
  isActive(status) && inactivityMs > thresholdMs;

/** In-place moves only; restart and recovery are separate rules below. */
export const LEGAL_TRANSITIONS: Readonly<Record<BatchStatus, readonly BatchStatus[]>> = {
  STARTING: ['STARTED', 'STOPPING', 'FAILED', 'UNKNOWN'],
  STARTED: ['STOPPING', 'STOPPED', 'FAILED', 'COMPLETED', 'UNKNOWN'],
  STOPPING: ['STOPPED', 'FAILED', 'UNKNOWN'],
  STOPPED: ['ABANDONED'],
  FAILED: ['ABANDONED'],
  COMPLETED: [],
  ABANDONED: [],
  UNKNOWN: ['ABANDONED', 'FAILED'],
};

export const canTransition = (from: BatchStatus, to: BatchStatus): boolean => LEGAL_TRANSITIONS[from].includes(to);

/** A restart always makes a new execution, and only from these. */
export const canRestartFrom = (status: BatchStatus): boolean => status === 'STOPPED' || status === 'FAILED';

/** The `ob_recovery_decision` CHECK rules: recovery may leave these statuses... */
export const RECOVERY_PRIOR_STATUSES = UNRESOLVED_STATUSES;
/** ...for exactly these. */
export const RECOVERY_RESULT_STATUSES = ['FAILED', 'ABANDONED'] as const satisfies readonly BatchStatus[];
export type RecoveryResultStatus = (typeof RECOVERY_RESULT_STATUSES)[number];

export const isRecoveryResultStatus = (value: unknown): value is RecoveryResultStatus =>
  includes(RECOVERY_RESULT_STATUSES, value);

/** Durable failure codes as stored in `failure_category`. */
export const FAILURE_CATEGORIES = [
  'INVALID_DEFINITION',
  'DUPLICATE_EXECUTION',
  'ILLEGAL_TRANSITION',
  'TRANSIENT_INFRASTRUCTURE',
  'PERMANENT_INFRASTRUCTURE',
  'USER_COMPONENT',
  'CANCELLED',
  'SERIALIZATION',
  'INVARIANT',
  'OPTIMISTIC_CONFLICT',
  'TIMEOUT',
  'UNSUPPORTED_CAPABILITY',
  'UNKNOWN_COMMIT',
  'SHUTDOWN_INCOMPLETE',
  'STALE_RECOVERED',
] as const;
export type FailureCategory = (typeof FAILURE_CATEGORIES)[number];
export type FailureCategorySnakeCase = Lowercase<FailureCategory>;

export const isFailureCategory = (value: unknown): value is FailureCategory => includes(FAILURE_CATEGORIES, value);

/** The form the operator-request digest binds (`stale_recovered`). */
export const failureCategorySnakeCase = (category: FailureCategory): FailureCategorySnakeCase =>
  category.toLowerCase() as FailureCategorySnakeCase;

export const FAULT_PHASES = ['read', 'process', 'write', 'transaction', 'checkpoint', 'listener', 'backoff'] as const;
export type FaultPhase = (typeof FAULT_PHASES)[number];

export const isFaultPhase = (value: unknown): value is FaultPhase => includes(FAULT_PHASES, value);

/**
 * How the owner token compares with the inspecting process. The value is the code
 * the evidence digest binds; the token itself never leaves the database.
 */
export const OWNER_OBSERVATIONS = ['ABSENT', 'CURRENT_PROCESS', 'OTHER_PROCESS'] as const;
export type OwnerObservation = (typeof OWNER_OBSERVATIONS)[number];

export const isOwnerObservation = (value: unknown): value is OwnerObservation => includes(OWNER_OBSERVATIONS, value);
