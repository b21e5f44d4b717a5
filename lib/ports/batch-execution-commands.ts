import type {
  BatchStatus,
  FailureCategory,
  RecoveryResultStatus,
  UnresolvedStatus,
} from '../domain/batch-status';
import type { Result } from '../domain/result';

/** Everything one recovery decision writes to the runtime's tables (DESIGN.md 5.1). */
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

export interface StopRequested {
  executionId: number;
  version: number;
  requestedAtMs: number;
}

export type StopRequestError =
  | { kind: 'ExecutionNotFound' }
  | { kind: 'NotActive'; status: BatchStatus }
  | { kind: 'StopAlreadyRequested' };

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
  /** Sets the stop request on an active execution that has none. */
  requestStop(executionId: number, requestedBy: string): Promise<Result<StopRequested, StopRequestError>>;
}
