import type { FailureCategory, RecoveryResultStatus } from '../domain/batch-status';
import type { ClosedProposalStatus, ProposalStatus } from '../domain/proposal-status';
import type { Result } from '../domain/result';

export type ProposalTarget = { kind: 'batch'; executionId: number } | { kind: 'orchestration'; executionId: string };

export interface ProposalPerson {
  id: string;
  login: string;
}

/** The proposal's human-approval wait (docs/design.md#approval-wait): owned by the proposal, bounded by the TTL. */
export interface ProposalWait {
  kind: 'human_approval';
  /** The proposal id, as text. */
  ownerId: string;
  deadlineMs: number;
  cancellationId: string;
}

export interface ProposalDecision {
  /** Null when the deadline closed the proposal rather than a person. */
  decider: ProposalPerson | null;
  decidedAtMs: number;
  resultingStatus: RecoveryResultStatus | null;
  failureCategory: FailureCategory | null;
  reasonCode: string | null;
  reason: string | null;
}

/** What confirming the proposal does: a guarded takeover, or the runtime's ABANDON. */
export type ProposalKind = 'TAKEOVER' | 'ABANDON';

export interface RecoveryProposal {
  id: number;
  kind: ProposalKind;
  target: ProposalTarget;
  status: ProposalStatus;
  evidenceDigestHex: string;
  /** The redacted evidence the digest was computed over, as stored. */
  evidence: unknown;
  /** Batch: the execution version the evidence observed. */
  expectedVersion: number | null;
  /** Orchestration: the fencing token the evidence observed, and who takes over. */
  expectedFencingToken: number | null;
  successorOwner: string | null;
  proposer: ProposalPerson;
  note: string | null;
  createdAtMs: number;
  wait: ProposalWait;
  decision: ProposalDecision | null;
}

export interface NewProposal {
  /** Defaults to TAKEOVER. */
  kind?: ProposalKind;
  target: ProposalTarget;
  evidenceDigestHex: string;
  evidence: unknown;
  expectedVersion: number | null;
  expectedFencingToken: number | null;
  successorOwner: string | null;
  proposer: ProposalPerson;
  note: string | null;
  /** The wait's deadline is created_at + ttlMs, both taken from the database's clock. */
  ttlMs: number;
  cancellationId: string;
}

export interface CloseProposal {
  status: ClosedProposalStatus;
  decider: ProposalPerson | null;
  resultingStatus?: RecoveryResultStatus | null;
  failureCategory?: FailureCategory | null;
  reasonCode?: string | null;
  reason?: string | null;
}

export interface LockedProposal {
  proposal: RecoveryProposal;
  /** The database's clock once the lock was held (epoch ms). */
  serverTimeMs: number;
}

/** `keel.recovery_proposal`: at most one PENDING proposal per target. */
export interface ProposalRepository {
  /** Stores a PENDING proposal, or returns the one already pending for the target. */
  createPending(proposal: NewProposal): Promise<{ created: boolean; proposal: RecoveryProposal }>;
  /** Locks the target's PENDING proposal (FOR UPDATE) for the rest of the transaction. */
  lockPending(target: ProposalTarget): Promise<LockedProposal | null>;
  get(id: number): Promise<RecoveryProposal | null>;
  /** Locks the row (FOR UPDATE) for the rest of the transaction. */
  lockForDecision(id: number): Promise<LockedProposal | null>;
  /** Closes a PENDING proposal; any other status (null: no such proposal) is NotPending and nothing changes. */
  close(
    id: number,
    decision: CloseProposal,
  ): Promise<Result<RecoveryProposal, { kind: 'NotPending'; status: ProposalStatus | null }>>;
  /** Locks PENDING proposals past their deadline, skipping rows another transaction holds. */
  lockExpired(limit: number): Promise<LockedProposal[]>;
}
