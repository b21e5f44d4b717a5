import type { GoverningSnapshots, WaitKind } from '../domain/checkpoint-model';

/** What the orchestration page shows: shared by the server query, the read API and the page. */

/**
 * Whether the stored checkpoint's tag verifies under the server's key, and if not, why.
 * Neither the key nor the tag is part of the answer.
 */
export type TagVerification =
  | { verified: true }
  | {
      verified: false;
      /**
       * INVALID_CHECKPOINT: the stored JSON is not a valid checkpoint (the reason says which rule);
       * COLUMNS_DISAGREE: the lease or tag columns differ from the JSON, so the row was edited;
       * TAG_MISMATCH: the tag is not the HMAC of the checkpoint under the server's key;
       * NO_KEY: the server holds no checkpoint key to verify with.
       */
      code: 'INVALID_CHECKPOINT' | 'COLUMNS_DISAGREE' | 'TAG_MISMATCH' | 'NO_KEY';
      why: string;
    };

export interface OrchestrationWait {
  kind: WaitKind;
  ownerId: string;
  deadline: string;
  /** A wake strictly after the deadline is too late (docs/design.md#checkpoint-rules). */
  expired: boolean;
  cancellationId: string;
}

export interface OrchestrationRetryPolicy {
  retryable: boolean;
  maxAttempts: number;
  backoffUnits: number;
  budgetUnits: number;
  idempotencyKey: string;
  /** The reason authorizeRetry would refuse any retry, whatever was used: not retryable or no idempotency key. */
  notDeclared: boolean;
}

export interface OrchestrationCompensationStep {
  capabilityId: string;
  order: number;
  authorizationDigest: string;
  /** Bound to the checkpoint's authorization snapshot, which the compensation plan requires of every step. */
  boundToAuthorization: boolean;
  /** Position when the plan runs (reverse of `order`); null when the plan would be refused. */
  runsAt: number | null;
}

/** The parts only the checkpoint's JSON holds; absent when that JSON cannot be read as a checkpoint. */
export interface OrchestrationCheckpointView {
  governingSpec: string;
  completedNodeIds: string[];
  wait: OrchestrationWait | null;
  retry: OrchestrationRetryPolicy | null;
  /** In declared order (ascending `order`, stored sequence for equal orders). */
  compensation: OrchestrationCompensationStep[];
  /** Whether the compensation plan is authorized by the checkpoint's own authorization snapshot. */
  compensationAuthorized: boolean;
  snapshots: GoverningSnapshots;
}

export interface OrchestrationProposal {
  id: number;
  kind: 'TAKEOVER' | 'ABANDON';
  status: string;
  proposerLogin: string;
  createdAt: string;
}

export interface OrchestrationDetail {
  executionId: string;
  /** From the row's columns, which the fencing guard and the listings use. */
  lease: { ownerId: string; fencingToken: number; expiresAt: string; expired: boolean };
  updatedAt: string;
  verification: TagVerification;
  /** Verified and lapsed by the server's clock: it may be proposed for takeover. */
  takeoverCandidate: boolean;
  checkpoint: OrchestrationCheckpointView | null;
  /** Proposals that target it, newest first. */
  proposals: OrchestrationProposal[];
  serverNow: string;
}
