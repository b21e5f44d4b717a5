/**
 * A recovery proposal's lifecycle (docs/design.md#proposals); `keel.recovery_proposal`'s CHECK is built from this list.
 */
export const PROPOSAL_STATUSES = ['PENDING', 'APPROVED', 'REJECTED', 'EXPIRED', 'SUPERSEDED', 'CANCELLED'] as const;
export type ProposalStatus = (typeof PROPOSAL_STATUSES)[number];
export type ClosedProposalStatus = Exclude<ProposalStatus, 'PENDING'>;
