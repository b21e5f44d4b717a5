import 'server-only';
import { isActionName, mayCancelProposal, mayTake } from '../domain/roles';
import type { Actor } from '../domain/actor';
import { evaluateWake } from '../domain/checkpoint';
import type { ErrorCode } from '../domain/error-code';
import type { LockedProposal, RecoveryProposal } from '../ports/proposal-repository';
import type { TakeoverPorts } from '../ports/takeover-ports';
import { refuseRecovery, type AuditContext } from './recovery-common';

/** Who may act on a pending proposal once its wait allows it. */
export type DecisionKind = 'decide' | 'cancel';

interface GateRefusal {
  code: ErrorCode;
  message: string;
}

function decidedRefusal(proposal: RecoveryProposal): GateRefusal {
  const by = proposal.decision?.decider?.login ?? null;
  const verb = proposal.status.toLowerCase();
  return { code: 'PROPOSAL_DECIDED', message: `Proposal ${proposal.id} was already ${verb}${by ? ` by ${by}` : ''}.` };
}

/**
 * The human-approval wait rules (docs/design.md#approval-wait), in order: cancellation wins, then
 * the deadline (which only a still-pending proposal can newly miss), then a decision
 * already taken. `expire` says the refusal also closes the proposal as EXPIRED.
 */
export function waitRuleRefusal(
  proposal: RecoveryProposal,
  serverTimeMs: number,
): { refusal: GateRefusal; expire: boolean } | null {
  if (proposal.status === 'CANCELLED') {
    return {
      refusal: { code: 'PROPOSAL_CANCELLED', message: `Proposal ${proposal.id} was cancelled.` },
      expire: false,
    };
  }
  const expired: GateRefusal = {
    code: 'PROPOSAL_EXPIRED',
    message: `Proposal ${proposal.id} passed its approval deadline.`,
  };
  if (proposal.status === 'EXPIRED') return { refusal: expired, expire: false };
  if (proposal.status !== 'PENDING') return { refusal: decidedRefusal(proposal), expire: false };
  const { wait } = proposal;
  const wake = evaluateWake(
    { kind: wait.kind, ownerId: wait.ownerId, deadline: wait.deadlineMs, cancellationId: wait.cancellationId },
    { ownerId: String(proposal.id), nowMs: serverTimeMs, cancelled: false },
  );
  if (wake.ok) return null;
  if (wake.error.kind === 'WaitExpired') return { refusal: expired, expire: true };
  return {
    refusal: {
      code: 'WAIT_OWNER_MISMATCH',
      message: `Proposal ${proposal.id}'s approval wait is not owned by the proposal.`,
    },
    expire: false,
  };
}

function permissionRefusal(
  actor: Actor,
  proposal: RecoveryProposal,
  kind: DecisionKind,
  action: string,
): GateRefusal | null {
  const isProposer = actor.id === proposal.proposer.id;
  if (kind === 'cancel') {
    return mayCancelProposal(actor, proposal.proposer.id)
      ? null
      : { code: 'FORBIDDEN', message: 'Only the proposer or an admin may cancel a proposal.' };
  }
  // Four eyes binds admins too: nobody approves or rejects their own proposal.
  if (isProposer)
    return { code: 'FOUR_EYES_REQUIRED', message: 'A proposal must be decided by someone other than its proposer.' };
  // The action's own permission (ACTION_PERMISSIONS), the one action() checked.
  if (!isActionName(action) || !mayTake(actor.role, action))
    return { code: 'FORBIDDEN', message: `The ${actor.role} role may not decide recovery proposals.` };
  return null;
}

/**
 * Applies the wait rules and the actor rules to a locked proposal, and refuses when one
 * fails (closing the proposal as EXPIRED when the deadline passed, a change the refusal
 * keeps). Returning means the actor may go on.
 */
export async function passGate(
  ports: TakeoverPorts,
  actor: Actor,
  locked: LockedProposal,
  context: AuditContext,
  kind: DecisionKind,
): Promise<void> {
  const { proposal, serverTimeMs } = locked;
  const observed = { proposalStatus: proposal.status };
  const waitRule = waitRuleRefusal(proposal, serverTimeMs);
  if (waitRule) {
    if (waitRule.expire) await ports.proposals.close(proposal.id, { status: 'EXPIRED', decider: null });
    const { code, message } = waitRule.refusal;
    refuseRecovery(actor, context, code, message, { observed, keeps: waitRule.expire ? 'changes' : 'event' });
  }
  const denied = permissionRefusal(actor, proposal, kind, context.action);
  if (denied) refuseRecovery(actor, context, denied.code, denied.message, { observed });
}

/**
 * Closes the proposal as SUPERSEDED and refuses, keeping that change: the durable evidence moved since it was proposed.
 */
export async function supersede(
  ports: TakeoverPorts,
  actor: Actor,
  proposal: RecoveryProposal,
  context: AuditContext,
  message: string,
  observed?: unknown,
): Promise<never> {
  await ports.proposals.close(proposal.id, {
    status: 'SUPERSEDED',
    decider: { id: actor.id, login: actor.login },
    reason: message,
  });
  return refuseRecovery(actor, context, 'RECOVERY_EVIDENCE_STALE', message, { observed, keeps: 'changes' });
}
