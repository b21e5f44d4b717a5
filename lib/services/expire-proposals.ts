import 'server-only';
import { can } from '../domain/roles';
import type { Actor } from '../domain/actor';
import { ok } from '../domain/result';
import type { ProposalTarget, RecoveryProposal } from '../ports/proposal-repository';
import type { TakeoverPorts } from '../ports/takeover-ports';
import type { UnitOfWork } from '../ports/unit-of-work';
import { waitRuleRefusal } from './proposal-gate';
import { transact, type ServiceResult } from './kernel';
import { auditActor, proposalContext, refuseRecovery } from './recovery-common';

export const DEFAULT_EXPIRY_BATCH = 100;

/** The actor the server's own deadline sweep records: the least role that may run it. */
export const HOUSEKEEPING_ACTOR: Actor = Object.freeze({
  id: 'keel:housekeeping',
  login: 'keel',
  name: 'Keel',
  role: 'viewer',
});

export interface ExpiredProposalsValue {
  expired: number[];
}

/**
 * Closes PENDING proposals whose approval deadline has passed by the database's
 * clock. It only applies the deadline rule, never a judgement, so any signed-in
 * role (or the server's own housekeeping actor) may run it. Rows a decision holds
 * are skipped, not waited on: that decision will find the deadline itself.
 */
export async function expireProposals(
  deps: { unitOfWork: UnitOfWork<TakeoverPorts> },
  actor: Actor,
  input: { limit?: number } = {},
): Promise<ServiceResult<ExpiredProposalsValue>> {
  return transact(deps.unitOfWork, async (ports) => {
    if (!can(actor.role, 'read')) {
      const context = { action: 'recovery.expire', target: { kind: 'recovery_proposal', id: '*' } };
      return refuseRecovery(actor, context, 'FORBIDDEN', `The ${actor.role} role may not expire proposals.`);
    }
    const due = await ports.proposals.lockExpired(input.limit ?? DEFAULT_EXPIRY_BATCH);
    const expired: number[] = [];
    for (const { proposal } of due) {
      if (await expireLocked(ports, proposal, actor)) expired.push(proposal.id);
    }
    return ok({ expired });
  });
}

/** Closes a locked PENDING proposal as EXPIRED and records it; false when it was no longer pending. */
async function expireLocked(ports: TakeoverPorts, proposal: RecoveryProposal, actor: Actor): Promise<boolean> {
  const closed = await ports.proposals.close(proposal.id, { status: 'EXPIRED', decider: null });
  if (!closed.ok) return false;
  await ports.audit.record({
    ...proposalContext('recovery.expire', proposal),
    actor: auditActor(actor),
    before: { proposalStatus: 'PENDING', deadlineMs: proposal.wait.deadlineMs },
    after: { proposalStatus: 'EXPIRED' },
    outcome: 'APPLIED',
  });
  return true;
}

/**
 * The target's PENDING proposal, locked for the rest of the transaction, unless its
 * approval deadline has passed by the database's clock: that one is closed as EXPIRED
 * first, as the deadline sweep would, so a proposal nobody may approve any more never
 * stands in for a new request.
 */
export async function livePendingProposal(
  ports: TakeoverPorts,
  target: ProposalTarget,
): Promise<RecoveryProposal | null> {
  const locked = await ports.proposals.lockPending(target);
  if (!locked) return null;
  if (waitRuleRefusal(locked.proposal, locked.serverTimeMs)?.expire) {
    await expireLocked(ports, locked.proposal, HOUSEKEEPING_ACTOR);
    return null;
  }
  return locked.proposal;
}
