import 'server-only';
import type { Actor } from '../domain/actor';
import { ok } from '../domain/result';
import type { ClosedProposalStatus } from '../domain/proposal-status';
import type { RecoveryProposal } from '../ports/proposal-repository';
import type { TakeoverPorts } from '../ports/takeover-ports';
import type { UnitOfWork } from '../ports/unit-of-work';
import { transact, type ServiceResult } from './kernel';
import { passGate, type DecisionKind } from './proposal-gate';
import { auditActor, proposalContext, refuseRecovery } from './recovery-common';

export interface CloseProposalInput {
  proposalId: number;
  reason?: string | null;
}

export interface ClosedProposalValue {
  proposal: RecoveryProposal;
}

/**
 * Reject and cancel share their shape: lock the proposal, apply the wait rules and
 * the actor rule, close it, audit. Neither touches the target, so neither locks it.
 */
async function closeByActor(
  deps: { unitOfWork: UnitOfWork<TakeoverPorts> },
  actor: Actor,
  input: CloseProposalInput,
  how: { action: string; status: ClosedProposalStatus; gate: DecisionKind },
): Promise<ServiceResult<ClosedProposalValue>> {
  return transact(deps.unitOfWork, async (ports) => {
    const reason = input.reason ?? null;
    const unknown = { action: how.action, target: { kind: 'recovery_proposal', id: String(input.proposalId) }, reason };
    const locked = await ports.proposals.lockForDecision(input.proposalId);
    if (!locked)
      return refuseRecovery(actor, unknown, 'PROPOSAL_NOT_FOUND', `Proposal ${input.proposalId} does not exist.`);
    const context = proposalContext(how.action, locked.proposal, reason);
    await passGate(ports, actor, locked, context, how.gate);
    const closed = await ports.proposals.close(input.proposalId, {
      status: how.status,
      decider: { id: actor.id, login: actor.login },
      reason,
    });
    if (!closed.ok) throw new Error(`proposal ${input.proposalId} left PENDING under its lock`);
    await ports.audit.record({
      ...context,
      actor: auditActor(actor),
      before: { proposalStatus: 'PENDING' },
      after: { proposalStatus: how.status },
      outcome: 'APPLIED',
    });
    return ok({ proposal: closed.value });
  });
}

/** An approver (not the proposer) turns the proposal down; the target is untouched. */
export const rejectProposal = (
  deps: { unitOfWork: UnitOfWork<TakeoverPorts> },
  actor: Actor,
  input: CloseProposalInput,
) => closeByActor(deps, actor, input, { action: 'recovery.reject', status: 'REJECTED', gate: 'decide' });

/** The proposer (or an admin) withdraws a pending proposal, cancelling its wait. */
export const cancelProposal = (
  deps: { unitOfWork: UnitOfWork<TakeoverPorts> },
  actor: Actor,
  input: CloseProposalInput,
) => closeByActor(deps, actor, input, { action: 'recovery.cancel', status: 'CANCELLED', gate: 'cancel' });
