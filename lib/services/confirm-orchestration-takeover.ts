import 'server-only';
import type { Actor } from '../domain/actor';
import { acquireLease, type InvalidCheckpoint } from '../domain/checkpoint';
import { errorCodeOf } from '../domain/error-code';
import { orchestrationEvidenceDigestHex } from '../domain/recovery';
import { ok, type Result } from '../domain/result';
import type { LoadedCheckpoint } from '../ports/checkpoint-store';
import type { RecoveryProposal } from '../ports/proposal-repository';
import type { TakeoverPorts } from '../ports/takeover-ports';
import type { ConfirmTakeoverInput, ConfirmTakeoverValue } from './confirm-takeover-types';
import type { ServiceResult } from './kernel';
import { supersede } from './proposal-gate';
import {
  auditActor,
  refuseOtherEvidence,
  refuseRecovery,
  type AuditContext,
  type RecoveryServiceDeps,
} from './recovery-common';

interface OrchestrationConfirmation {
  proposal: RecoveryProposal;
  context: AuditContext;
  input: ConfirmTakeoverInput;
  /** Read FOR UPDATE by the caller, before the wait rules. */
  loaded: Result<LoadedCheckpoint | null, InvalidCheckpoint>;
}

/**
 * The orchestration half of a confirmed takeover: hand the lease to the successor
 * with the next fencing token and re-seal, in the caller's transaction. `recover`
 * is not used: it refuses exactly the expired lease that made this a candidate.
 */
export async function confirmOrchestrationTakeover(
  deps: RecoveryServiceDeps,
  ports: TakeoverPorts,
  actor: Actor,
  { proposal, context, input, loaded }: OrchestrationConfirmation,
): Promise<ServiceResult<ConfirmTakeoverValue>> {
  if (proposal.target.kind !== 'orchestration' || proposal.successorOwner === null) {
    throw new Error('confirmOrchestrationTakeover needs an orchestration proposal with a successor');
  }
  if (!loaded.ok) {
    return refuseRecovery(
      actor,
      context,
      'INVALID_CHECKPOINT',
      `The stored checkpoint is not valid: ${loaded.error.reason}.`,
    );
  }
  if (!loaded.value)
    return supersede(ports, actor, proposal, context, 'The orchestration checkpoint no longer exists.');
  const { checkpoint, serverTimeMs } = loaded.value;
  if (!ports.checkpoints.verify(checkpoint)) {
    return refuseRecovery(
      actor,
      context,
      'AUTHENTICATION_FAILED',
      'The checkpoint does not authenticate; nothing was changed.',
    );
  }
  const { lease } = checkpoint;
  const computed = orchestrationEvidenceDigestHex({
    executionId: checkpoint.executionId,
    authenticationTag: checkpoint.authenticationTag,
    fencingToken: lease.fencingToken,
    expiresAtMs: lease.expiresAt,
    leaseOwner: lease.ownerId,
  });
  if (!computed.ok)
    return refuseRecovery(
      actor,
      context,
      'INVALID_CHECKPOINT',
      `The stored checkpoint is not valid: ${computed.error.field}.`,
    );
  const digest = computed.value;
  const observed = {
    leaseOwner: lease.ownerId,
    fencingToken: lease.fencingToken,
    expiresAtMs: lease.expiresAt,
    evidenceDigest: digest,
  };
  if (digest !== proposal.evidenceDigestHex || lease.fencingToken !== proposal.expectedFencingToken) {
    return supersede(
      ports,
      actor,
      proposal,
      context,
      'The checkpoint changed since the proposal; propose again.',
      observed,
    );
  }
  if (
    input.evidenceDigest !== proposal.evidenceDigestHex ||
    input.expectedFencingToken !== proposal.expectedFencingToken
  ) {
    return refuseOtherEvidence(actor, context, observed);
  }
  const next = acquireLease(
    checkpoint,
    proposal.successorOwner,
    lease.fencingToken + 1,
    serverTimeMs + deps.settings.orchestrationLeaseMs,
  );
  if (!next.ok)
    return refuseRecovery(actor, context, 'STALE_LEASE', 'The lease cannot move to a newer token and expiry.', {
      observed,
    });
  const saved = await ports.checkpoints.save(next.value);
  if (!saved.ok) {
    return refuseRecovery(
      actor,
      context,
      errorCodeOf(saved.error.kind),
      'The checkpoint could not be re-sealed under the new lease.',
      {
        observed,
      },
    );
  }
  const closed = await ports.proposals.close(proposal.id, {
    status: 'APPROVED',
    decider: { id: actor.id, login: actor.login },
    reasonCode: input.reasonCode ?? null,
    reason: input.reason ?? null,
  });
  if (!closed.ok) throw new Error(`proposal ${proposal.id} left PENDING under its lock`);
  const newLease = saved.value.lease;
  await ports.audit.record({
    ...context,
    actor: auditActor(actor),
    before: { leaseOwner: lease.ownerId, fencingToken: lease.fencingToken, expiresAtMs: lease.expiresAt },
    after: { leaseOwner: newLease.ownerId, fencingToken: newLease.fencingToken, expiresAtMs: newLease.expiresAt },
    outcome: 'APPLIED',
  });
  return ok({
    kind: 'orchestration',
    proposal: closed.value,
    executionId: checkpoint.executionId,
    leaseOwner: newLease.ownerId,
    fencingToken: newLease.fencingToken,
    expiresAtMs: newLease.expiresAt,
  });
}
