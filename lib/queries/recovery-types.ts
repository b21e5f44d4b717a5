import { z } from 'zod';
import { PROPOSAL_STATUSES } from '../domain/proposal-status';
import type { EvidenceView } from '../domain/recovery-evidence-view';

/** The proposals list's filters; the read adds the keyset cursor, decoded by its schema (lib/reads/recovery.ts). */
export const proposalFiltersSchema = z.object({ status: z.enum(PROPOSAL_STATUSES).optional() });
export type ProposalFilterWords = z.output<typeof proposalFiltersSchema>;

/** How many orchestration leases to list (200 unless given). */
export const orchestrationLeasesQuerySchema = z.object({ limit: z.coerce.number().int().min(1).max(1000).optional() });

/** What the recovery pages show: shared by the server queries, the read API and the pages. */
export interface ProposalListItem {
  id: number;
  targetKind: 'batch' | 'orchestration';
  /** TAKEOVER, or ABANDON: confirming runs the runtime's ABANDON request. */
  kind: 'TAKEOVER' | 'ABANDON';
  targetId: string;
  status: string;
  proposerLogin: string;
  deciderLogin: string | null;
  createdAt: string;
  deadline: string;
  decidedAt: string | null;
  resultingStatus: string | null;
}

export interface ProposalPage {
  items: ProposalListItem[];
  nextCursor: string | null;
  serverNow: string;
}

export interface ProposalDetail extends ProposalListItem {
  evidenceDigest: string;
  evidence: Record<string, unknown>;
  expectedVersion: number | null;
  expectedFencingToken: number | null;
  successorOwner: string | null;
  proposerId: string;
  note: string | null;
  failureCategory: string | null;
  reasonCode: string | null;
  reason: string | null;
  markers: {
    unknownCommit: boolean;
    completedPartition: boolean;
    committedFlowDecision: boolean;
    ambiguousExternalEffect: boolean;
  } | null;
  /** The evidence as the page explains it; null when the stored evidence has an unexpected shape. */
  evidenceView: EvidenceView | null;
  /** The logical name of the evidence's latest step, when that step still exists. */
  latestStepName: string | null;
  serverNow: string;
}

export interface OrchestrationLease {
  executionId: string;
  leaseOwner: string;
  fencingToken: number;
  expiresAt: string;
  expired: boolean;
  authenticated: boolean;
  pendingProposalId: number | null;
}

export interface OrchestrationLeasePage {
  items: OrchestrationLease[];
  serverNow: string;
}
