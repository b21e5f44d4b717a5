import type { BatchStatus, FailureCategory, RecoveryResultStatus, UnresolvedStatus } from '../domain/batch-status';
import type { OperatorAction, OperatorOutcomeClass, OperatorRejectionCode } from '../domain/operator-request';
import type { Result } from '../domain/result';

/** Everything one recovery decision writes to the runtime's tables (docs/design.md#guarded-takeover). */
export interface RecoveryDecisionWrite {
  executionId: number;
  /** The version the evidence observed; the update is guarded by it. */
  observedVersion: number;
  priorStatus: UnresolvedStatus;
  resultingStatus: RecoveryResultStatus;
  /** Set for FAILED; ABANDONED keeps the execution's failure columns as they are. */
  failure: { category: FailureCategory; id: number } | null;
  reasonCode: string;
  operatorReference: string;
  evidenceDigestHex: string;
  operationId: string;
  actorRef: string;
  requestDigestHex: string;
}

export interface AppliedRecoveryDecision {
  executionId: number;
  version: number;
  decisionId: number;
  operatorRequestId: number;
  decidedAtMs: number;
}

/** The execution row as an operator request's guard reads it, under its row lock. */
export interface LockedExecution {
  executionId: number;
  jobInstanceId: number;
  status: BatchStatus;
  version: number;
  stopRequested: boolean;
  /** Whether an `ob_recovery_decision` exists for it (the ABANDON guard of UNKNOWN). */
  hasRecoveryDecision: boolean;
  /** The database's clock at the lock, whole milliseconds: the request's one instant. */
  nowMs: number;
}

/** One `ob_operator_request` row as Keel writes it (the runtime's OperatorRecordDraft). */
export interface OperatorRequestDraft {
  action: OperatorAction;
  operationId: string;
  actorRef: string;
  reasonCode: string | null;
  requestDigestHex: string;
  /** APPLIED: the execution's instance; REJECTED: null, as the runtime records a rejection. */
  jobInstanceId: number | null;
  jobExecutionId: number;
  observedVersion: number;
  priorStatus: BatchStatus | null;
  resultStatus: BatchStatus | null;
  outcome: OperatorOutcomeClass;
  rejectionCode: OperatorRejectionCode | null;
  requestedAtMs: number;
}

export interface RecordedOperatorRequest {
  id: number;
  action: OperatorAction;
  operationId: string;
  jobExecutionId: number | null;
  requestDigestHex: string;
  outcome: OperatorOutcomeClass;
  rejectionCode: string | null;
  priorStatus: string | null;
  resultStatus: string | null;
  observedVersion: number | null;
}

export interface AbandonedExecution {
  version: number;
}

/** The writes Keel makes to `oxide_batch` executions, each one guarded in SQL. */
export interface BatchExecutionCommands {
  /** Locks the execution row for the rest of the transaction; false when it does not exist. */
  lockExecution(executionId: number): Promise<boolean>;
  /**
   * One statement: the execution's new status, the `ob_recovery_decision` and the
   * APPLIED `ob_operator_request`. VersionConflict when version or status moved.
   */
  applyRecoveryDecision(
    write: RecoveryDecisionWrite,
  ): Promise<Result<AppliedRecoveryDecision, { kind: 'VersionConflict' }>>;
  /** Locks the execution row (FOR UPDATE) and reads what an operator request's guard needs; null when absent. */
  lockForOperatorRequest(executionId: number): Promise<LockedExecution | null>;
  /** The request already recorded under (action, operation id), if any. */
  findOperatorRequest(action: OperatorAction, operationId: string): Promise<RecordedOperatorRequest | null>;
  appendOperatorRequest(draft: OperatorRequestDraft): Promise<{ id: number }>;
  /**
   * The runtime's `request_execution_stop`: sets `stop_requested_at/by`, moves
   * `updated_at` to greatest(updated_at, requested), and leaves the version as it is,
   * under a compare-and-set on the version.
   */
  requestStop(
    executionId: number,
    expectedVersion: number,
    actorRef: string,
    requestedAtMs: number,
  ): Promise<Result<void, { kind: 'VersionConflict' }>>;
  /**
   * The runtime's ABANDONED transition: status ABANDONED, `ended_at` kept or set to
   * the instant, `updated_at` the instant, version + 1, under a version compare-and-set.
   */
  abandon(
    executionId: number,
    expectedVersion: number,
    atMs: number,
  ): Promise<Result<AbandonedExecution, { kind: 'VersionConflict' }>>;
}
