import 'server-only';
import type { Actor } from '../domain/actor';
import type { ErrorCode } from '../domain/error-code';
import { isActorRef } from '../domain/identifier-patterns';
import type { ProposalTarget, RecoveryProposal } from '../ports/proposal-repository';
import type { ProposerClock } from '../ports/proposer-clock';
import type { TakeoverPorts } from '../ports/takeover-ports';
import type { UnitOfWork } from '../ports/unit-of-work';
import { refuse, serviceError, type RefusalKeeps } from './kernel';

export interface RecoverySettings {
  staleThresholdMs: number;
  maxClockSkewMs: number;
  proposalTtlMs: number;
  orchestrationLeaseMs: number;
}

/** What the recovery use cases run on. */
export interface RecoveryServiceDeps {
  unitOfWork: UnitOfWork<TakeoverPorts>;
  clock: ProposerClock;
  settings: RecoverySettings;
  /** This process's owner token: handed to the snapshot read, compared in SQL, never returned. */
  ownerToken: Uint8Array;
}

export interface AuditContext {
  action: string;
  target: { kind: string; id: string };
  operationId?: string | null;
  digest?: string | null;
  reason?: string | null;
}

/** The audit target of an execution or orchestration. */
export const auditTarget = (target: ProposalTarget) =>
  target.kind === 'batch'
    ? { kind: 'batch_execution', id: String(target.executionId) }
    : { kind: 'orchestration', id: target.executionId };

/** The operation id every event about one proposal carries, and the runtime's operator request uses. */
export const proposalOperationId = (proposalId: number) => `keel-proposal-${proposalId}`;

/** The reason code recorded when the approver gives none (a takeover or an abandon). */
export const DEFAULT_RECOVERY_REASON_CODE = 'OPERATOR_CONFIRMED';

export const proposalContext = (action: string, proposal: RecoveryProposal, reason?: string | null): AuditContext => ({
  action,
  target: auditTarget(proposal.target),
  operationId: proposalOperationId(proposal.id),
  digest: proposal.evidenceDigestHex,
  reason: reason ?? null,
});

export const auditActor = (actor: Actor) => ({ id: actor.id, login: actor.login, role: actor.role });

/**
 * Refuses a recovery request through the kernel (lib/services/kernel.ts): its event carries the
 * context, what the request found (`observed`, as `before`) and the message (as `after`).
 */
export function refuseRecovery(
  actor: Actor,
  context: AuditContext,
  code: ErrorCode,
  message: string,
  options: { observed?: unknown; keeps?: RefusalKeeps } = {},
): never {
  const event = { ...context, actor: auditActor(actor), before: options.observed ?? null, after: { message } };
  return refuse(serviceError(code, message), event, options.keeps);
}

/** The runtime records the actor's login as its varchar(128) actor reference: refuses a login that cannot be one. */
export function refuseUnlessActorRef(actor: Actor, context: AuditContext): void {
  if (!isActorRef(actor.login)) {
    refuseRecovery(
      actor,
      context,
      'INVALID_ACTOR_REF',
      'Your login cannot be recorded as the runtime actor reference.',
    );
  }
}

/**
 * The durable state still matches the proposal, but the approver looked at other evidence than it holds:
 * refuses, keeping the proposal.
 */
export const refuseOtherEvidence = (actor: Actor, context: AuditContext, observed: unknown): never =>
  refuseRecovery(
    actor,
    context,
    'RECOVERY_EVIDENCE_STALE',
    'The confirmation names other evidence than the proposal holds; reload it.',
    { observed },
  );
