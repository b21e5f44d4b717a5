import 'server-only';
import type { FailureCategory, RecoveryResultStatus } from '../domain/batch-status';
import type { RecoveryProposal } from '../ports/proposal-repository';
import type { AbandonConfirmed } from './abandon-execution';

// The confirm use case's input and result, apart from it so the per-kind confirmations it dispatches to
// can name them without importing it back (no import cycle).

export interface ConfirmTakeoverInput {
  proposalId: number;
  /** The evidence digest the approver saw (lowercase hex). */
  evidenceDigest: string;
  /** Batch: the execution version the approver saw. */
  expectedVersion?: number | null;
  /** Orchestration: the fencing token the approver saw. */
  expectedFencingToken?: number | null;
  /** Batch only. */
  resultingStatus?: RecoveryResultStatus;
  /** Batch FAILED only; defaults to STALE_RECOVERED. */
  failureCategory?: FailureCategory | null;
  /** Defaults to OPERATOR_CONFIRMED. */
  reasonCode?: string | null;
  /** Required when the evidence shows an unknown commit or an ambiguous external effect. */
  acknowledged?: boolean;
  reason?: string | null;
}

export type ConfirmTakeoverValue =
  | {
      kind: 'batch';
      proposal: RecoveryProposal;
      executionId: number;
      resultingStatus: RecoveryResultStatus;
      version: number;
      decisionId: number;
      operatorRequestId: number;
      requestDigestHex: string;
    }
  | AbandonConfirmed
  | {
      kind: 'orchestration';
      proposal: RecoveryProposal;
      executionId: string;
      leaseOwner: string;
      fencingToken: number;
      expiresAtMs: number;
    };
