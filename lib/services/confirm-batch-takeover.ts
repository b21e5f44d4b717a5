import 'server-only';
import type { Actor } from '../domain/actor';
import { isUnresolved } from '../domain/batch-status';
import { recoverRequestDigestHex, snapshotEvidenceDigestHex } from '../domain/recovery';
import { ok } from '../domain/result';
import type { RecoveryProposal } from '../ports/proposal-repository';
import type { TakeoverPorts } from '../ports/takeover-ports';
import type { ConfirmTakeoverInput, ConfirmTakeoverValue } from './confirm-takeover-types';
import { supersede } from './proposal-gate';
import type { ServiceResult } from './kernel';
import {
  auditActor,
  DEFAULT_RECOVERY_REASON_CODE,
  proposalOperationId,
  refuseOtherEvidence,
  refuseRecovery,
  refuseUnlessActorRef,
  type AuditContext,
  type RecoveryServiceDeps,
} from './recovery-common';

/** With an unknown commit, only this reason may fail the execution (docs/design.md#guarded-takeover). */
export const UNKNOWN_EFFECT_REASON_CODE = 'UNKNOWN_EFFECT';

interface BatchConfirmation {
  proposal: RecoveryProposal;
  context: AuditContext;
  input: ConfirmTakeoverInput;
}

/**
 * The batch half of a confirmed takeover. The caller holds the proposal and the
 * execution row locks, and the wait and actor rules have passed.
 */
export async function confirmBatchTakeover(
  deps: RecoveryServiceDeps,
  ports: TakeoverPorts,
  actor: Actor,
  { proposal, context, input }: BatchConfirmation,
): Promise<ServiceResult<ConfirmTakeoverValue>> {
  if (proposal.target.kind !== 'batch') throw new Error('confirmBatchTakeover needs a batch proposal');
  const executionId = proposal.target.executionId;
  const snapshot = await ports.recovery.recoverySnapshot(executionId, deps.ownerToken);
  if (!snapshot.ok) {
    if (snapshot.error.kind === 'ExecutionNotFound')
      return supersede(ports, actor, proposal, context, 'The execution no longer exists.');
    return refuseRecovery(actor, context, 'REPOSITORY_UNAVAILABLE', 'The execution could not be read; try again.');
  }
  const current = snapshot.value;
  const computed = snapshotEvidenceDigestHex(current);
  if (!computed.ok)
    return refuseRecovery(
      actor,
      context,
      'REPOSITORY_UNAVAILABLE',
      `The execution's evidence is malformed (${computed.error.field}).`,
    );
  const digest = computed.value;
  const observed = { status: current.status, version: current.version, evidenceDigest: digest };
  // Any durable change since the proposal (a heartbeat, a stop request, a new step) moves the digest.
  if (
    digest !== proposal.evidenceDigestHex ||
    current.version !== proposal.expectedVersion ||
    !isUnresolved(current.status)
  ) {
    return supersede(
      ports,
      actor,
      proposal,
      context,
      'The execution changed since the proposal; propose again.',
      observed,
    );
  }
  // The durable state still matches, but the approver looked at other evidence: refuse, keep the proposal.
  if (input.evidenceDigest !== proposal.evidenceDigestHex || input.expectedVersion !== proposal.expectedVersion) {
    return refuseOtherEvidence(actor, context, observed);
  }
  const { unknownCommit, ambiguousExternalEffect } = current.markers;
  if ((unknownCommit || ambiguousExternalEffect) && input.acknowledged !== true) {
    const why = unknownCommit ? 'an unknown commit' : 'an ambiguous external effect';
    return refuseRecovery(
      actor,
      context,
      'ACKNOWLEDGEMENT_REQUIRED',
      `The evidence shows ${why}; acknowledge it to confirm.`,
    );
  }
  const resultingStatus = input.resultingStatus;
  if (!resultingStatus) {
    return refuseRecovery(actor, context, 'INVALID_INPUT', 'Choose FAILED or ABANDONED for the execution.');
  }
  const reasonCode = input.reasonCode ?? DEFAULT_RECOVERY_REASON_CODE;
  if (unknownCommit && resultingStatus === 'FAILED' && reasonCode !== UNKNOWN_EFFECT_REASON_CODE) {
    return refuseRecovery(
      actor,
      context,
      'UNRESOLVED_RECOVERY_REQUIRED',
      `An unknown commit may only be failed with reason ${UNKNOWN_EFFECT_REASON_CODE}; or abandon it.`,
    );
  }
  refuseUnlessActorRef(actor, context);
  const failureRecord =
    resultingStatus === 'FAILED' ? { category: input.failureCategory ?? 'STALE_RECOVERED', id: proposal.id } : null;
  const requestDigest = recoverRequestDigestHex({
    executionId,
    observedVersion: current.version,
    reasonCode,
    evidenceDigest: digest,
    unknownCommit,
    ...(failureRecord
      ? { resultingStatus: 'FAILED' as const, failure: failureRecord }
      : { resultingStatus: 'ABANDONED' as const, failure: null }),
  });
  if (!requestDigest.ok) {
    return refuseRecovery(
      actor,
      context,
      'INVALID_INPUT',
      `The recovery request cannot be encoded (${requestDigest.error.kind}).`,
    );
  }
  const operationId = proposalOperationId(proposal.id);
  const applied = await ports.executions.applyRecoveryDecision({
    executionId,
    observedVersion: current.version,
    priorStatus: current.status,
    resultingStatus,
    failure: failureRecord,
    reasonCode,
    operatorReference: `keel:proposal:${proposal.id}`,
    evidenceDigestHex: digest,
    operationId,
    actorRef: actor.login,
    requestDigestHex: requestDigest.value,
  });
  if (!applied.ok)
    return supersede(
      ports,
      actor,
      proposal,
      context,
      'The execution changed while confirming; propose again.',
      observed,
    );
  const closed = await ports.proposals.close(proposal.id, {
    status: 'APPROVED',
    decider: { id: actor.id, login: actor.login },
    resultingStatus,
    failureCategory: failureRecord?.category ?? null,
    reasonCode,
    reason: input.reason ?? null,
  });
  // The proposal lock is held, so it cannot have left PENDING; throwing rolls the takeover back.
  if (!closed.ok) throw new Error(`proposal ${proposal.id} left PENDING under its lock`);
  const { version, decisionId, operatorRequestId } = applied.value;
  await ports.audit.record({
    ...context,
    actor: auditActor(actor),
    before: { status: current.status, version: current.version },
    after: { status: resultingStatus, version, decisionId, operatorRequestId, reasonCode, failure: failureRecord },
    outcome: 'APPLIED',
  });
  return ok({
    kind: 'batch',
    proposal: closed.value,
    executionId,
    resultingStatus,
    version,
    decisionId,
    operatorRequestId,
    requestDigestHex: requestDigest.value,
  });
}
