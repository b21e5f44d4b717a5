/** A recovery proposal's lifecycle (DESIGN.md 3.3); `keel.recovery_proposal`'s CHECK is built from this list. */
export const PROPOSAL_STATUSES = ['PENDING', 'APPROVED', 'REJECTED', 'EXPIRED', 'SUPERSEDED', 'CANCELLED'] as const;
export type ProposalStatus = (typeof PROPOSAL_STATUSES)[number];
export type ClosedProposalStatus = Exclude<ProposalStatus, 'PENDING'>;
