import 'server-only';
import { isActionName, mayCancelProposal, mayTake } from '../domain/roles';
import type { Actor } from '../domain/actor';
import { evaluateWake } from '../domain/checkpoint';
import type { LockedProposal, RecoveryProposal } from '../ports/proposal-repository';
import type { TakeoverPorts } from '../ports/takeover-ports';
import { failure, refuse, type AuditContext, type RecoveryFailure } from './recovery-common';

/** Who may act on a pending proposal once its wait allows it. */
export type DecisionKind = 'decide' | 'cancel';

function decidedFailure(proposal: RecoveryProposal): RecoveryFailure {
  const by = proposal.decision?.decider?.login ?? null;
  const verb = proposal.status.toLowerCase();
  return failure('PROPOSAL_DECIDED', `Proposal ${proposal.id} was already ${verb}${by ? ` by ${by}` : ''}.`, {
    decidedBy: by,
    proposalStatus: proposal.status,
  });
}

/**
 * The human-approval wait rules (docs/design.md#approval-wait), in order: cancellation wins, then
 * the deadline (which only a still-pending proposal can newly miss), then a decision
 * already taken. `expire` says the refusal also closes the proposal as EXPIRED.
 */
export function waitRuleRefusal(
  proposal: RecoveryProposal,
  serverTimeMs: number,
): { refusal: RecoveryFailure; expire: boolean } | null {
  if (proposal.status === 'CANCELLED') {
    return {
      refusal: failure('PROPOSAL_CANCELLED', `Proposal ${proposal.id} was cancelled.`, { proposalStatus: 'CANCELLED' }),
      expire: false,
    };
  }
  const expired = failure('PROPOSAL_EXPIRED', `Proposal ${proposal.id} passed its approval deadline.`, {
    proposalStatus: 'EXPIRED',
  });
  if (proposal.status === 'EXPIRED') return { refusal: expired, expire: false };
  if (proposal.status !== 'PENDING') return { refusal: decidedFailure(proposal), expire: false };
  const { wait } = proposal;
  const wake = evaluateWake(
    { kind: wait.kind, ownerId: wait.ownerId, deadline: wait.deadlineMs, cancellationId: wait.cancellationId },
    { ownerId: String(proposal.id), nowMs: serverTimeMs, cancelled: false },
  );
  if (wake.ok) return null;
  if (wake.error.kind === 'WaitExpired') return { refusal: expired, expire: true };
  return {
    refusal: failure('WAIT_OWNER_MISMATCH', `Proposal ${proposal.id}'s approval wait is not owned by the proposal.`),
    expire: false,
  };
}

function permissionRefusal(
  actor: Actor,
  proposal: RecoveryProposal,
  kind: DecisionKind,
  action: string,
): RecoveryFailure | null {
  const isProposer = actor.id === proposal.proposer.id;
  if (kind === 'cancel') {
    return mayCancelProposal(actor, proposal.proposer.id)
      ? null
      : failure('FORBIDDEN', 'Only the proposer or an admin may cancel a proposal.');
  }
  // Four eyes binds admins too: nobody approves or rejects their own proposal.
  if (isProposer)
    return failure('FOUR_EYES_REQUIRED', 'A proposal must be decided by someone other than its proposer.');
  // The action's own permission (ACTION_PERMISSIONS), the one action() checked.
  if (!isActionName(action) || !mayTake(actor.role, action))
    return failure('FORBIDDEN', `The ${actor.role} role may not decide recovery proposals.`);
  return null;
}

/**
 * Applies the wait rules and the actor rules to a locked proposal. On a refusal it
 * records the audit event (and closes the proposal as EXPIRED when the deadline
 * passed) and returns the refusal; null means the actor may go on.
 */
export async function passGate(
  ports: TakeoverPorts,
  actor: Actor,
  locked: LockedProposal,
  context: AuditContext,
  kind: DecisionKind,
): Promise<{ ok: false; error: RecoveryFailure } | null> {
  const { proposal, serverTimeMs } = locked;
  const waitRule = waitRuleRefusal(proposal, serverTimeMs);
  if (waitRule) {
    if (waitRule.expire) await ports.proposals.close(proposal.id, { status: 'EXPIRED', decider: null });
    return refuse(ports.audit, actor, context, waitRule.refusal, { proposalStatus: proposal.status });
  }
  const denied = permissionRefusal(actor, proposal, kind, context.action);
  return denied ? refuse(ports.audit, actor, context, denied, { proposalStatus: proposal.status }) : null;
}

/** Closes the proposal as SUPERSEDED and refuses: the durable evidence moved since it was proposed. */
export async function supersede(
  ports: TakeoverPorts,
  actor: Actor,
  proposal: RecoveryProposal,
  context: AuditContext,
  message: string,
  observed?: unknown,
): Promise<{ ok: false; error: RecoveryFailure }> {
  await ports.proposals.close(proposal.id, {
    status: 'SUPERSEDED',
    decider: { id: actor.id, login: actor.login },
    reason: message,
  });
  return refuse(
    ports.audit,
    actor,
    context,
    failure('RECOVERY_EVIDENCE_STALE', message, { proposalStatus: 'SUPERSEDED' }),
    observed,
  );
}
