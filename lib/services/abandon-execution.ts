import 'server-only';
import { randomUUID } from 'node:crypto';
import { can } from '../domain/roles';
import type { Actor } from '../domain/actor';
import type { ErrorCode } from '../domain/error-code';
import { abandonDisposition, executionRequestDigestHex } from '../domain/operator-request';
import { snapshotEvidenceDigestHex } from '../domain/recovery';
import { ok } from '../domain/result';
import type { RecoveryProposal } from '../ports/proposal-repository';
import type { TakeoverPorts } from '../ports/takeover-ports';
import { livePendingProposal } from './expire-proposals';
import { transact, type ServiceResult } from './kernel';
import { supersede } from './proposal-gate';
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

/** `note`: why the execution should be abandoned; required, so the approver decides knowing it. */
export interface ProposeAbandonInput {
  executionId: number;
  note?: string | null;
}

export const ABANDON_REASON_MESSAGE =
  'Say why the execution should be abandoned: the approver reads it before deciding.';

export interface ProposeAbandonValue {
  proposal: RecoveryProposal;
  created: boolean;
}

/**
 * Step 1 of abandoning an execution, behind the same four eyes as a takeover: an
 * approver or admin reads the evidence and, with a reason the approver will read,
 * stores a PENDING ABANDON proposal bound to its digest and version. The runtime's ABANDON guard is applied now too, so
 * a proposal that could never be confirmed is refused at once: STOPPED and FAILED may
 * be abandoned, UNKNOWN only after a recovery decision (UNRESOLVED_RECOVERY_REQUIRED
 * otherwise), anything else is INVALID_STATE (ABANDONED included: there is nothing to
 * decide).
 */
export async function proposeAbandon(
  deps: RecoveryServiceDeps,
  actor: Actor,
  input: ProposeAbandonInput,
): Promise<ServiceResult<ProposeAbandonValue>> {
  const note = input.note || null;
  const context: AuditContext = {
    action: 'execution.abandon.propose',
    target: { kind: 'batch_execution', id: String(input.executionId) },
    reason: input.note ?? null,
  };
  // Every refusal keeps what livePendingProposal may have done on the way, the expiry of a
  // proposal past its deadline; nothing else is written before one.
  function refuseRequest(code: ErrorCode, message: string): never {
    return refuseRecovery(actor, context, code, message, { keeps: 'changes' });
  }
  return transact(deps.unitOfWork, async (ports) => {
    if (!can(actor.role, 'abandonExecution'))
      refuseRequest('FORBIDDEN', `The ${actor.role} role may not propose abandoning an execution.`);
    // The schema lets the note out (a blank one is read as none); the proposal needs it.
    if (note === null) refuseRequest('REASON_REQUIRED', ABANDON_REASON_MESSAGE);
    const target = { kind: 'batch' as const, executionId: input.executionId };
    const record = async (proposal: RecoveryProposal, created: boolean) => {
      await ports.audit.record({
        ...context,
        actor: auditActor(actor),
        operationId: proposalOperationId(proposal.id),
        digest: proposal.evidenceDigestHex,
        after: { proposalId: proposal.id, kind: proposal.kind, created, expectedVersion: proposal.expectedVersion },
        outcome: 'APPLIED',
      });
      return ok({ proposal, created });
    };
    const takeoverPending = (pending: RecoveryProposal) =>
      refuseRequest(
        'PROPOSAL_PENDING',
        `Takeover proposal ${pending.id} is pending for this execution; decide it first.`,
      );
    const pending = await livePendingProposal(ports, target);
    if (pending) return pending.kind === 'ABANDON' ? record(pending, false) : takeoverPending(pending);
    const locked = await ports.executions.lockForOperatorRequest(input.executionId);
    if (!locked) return refuseRequest('EXECUTION_NOT_FOUND', `Execution ${input.executionId} does not exist.`);
    const disposition = abandonDisposition(locked.status, locked.hasRecoveryDecision);
    if (disposition === 'UNRESOLVED_RECOVERY_REQUIRED') {
      return refuseRequest(
        'UNRESOLVED_RECOVERY_REQUIRED',
        'An UNKNOWN execution can be abandoned only after a recovery decision; request a takeover.',
      );
    }
    if (disposition !== 'ABANDON') {
      return refuseRequest('INVALID_STATE', `An execution in ${locked.status} cannot be abandoned.`);
    }
    const snapshot = await ports.recovery.recoverySnapshot(input.executionId, deps.ownerToken);
    if (!snapshot.ok) return refuseRequest('REPOSITORY_UNAVAILABLE', 'The execution could not be read; try again.');
    const digest = snapshotEvidenceDigestHex(snapshot.value);
    if (!digest.ok)
      return refuseRequest('INVALID_EVIDENCE', `The execution's evidence is malformed (${digest.error.field}).`);
    const serverTimeMs = snapshot.value.serverTimeMs;
    const { created, proposal } = await ports.proposals.createPending({
      kind: 'ABANDON',
      target,
      evidence: { ...snapshot.value, inactivityMs: serverTimeMs - snapshot.value.updatedAtMs, digestHex: digest.value },
      evidenceDigestHex: digest.value,
      expectedVersion: snapshot.value.version,
      expectedFencingToken: null,
      successorOwner: null,
      proposer: { id: actor.id, login: actor.login },
      note,
      ttlMs: deps.settings.proposalTtlMs,
      cancellationId: randomUUID(),
    });
    // A concurrent request may have won the target with a takeover proposal.
    if (proposal.kind !== 'ABANDON') return takeoverPending(proposal);
    return record(proposal, created);
  });
}

export interface AbandonConfirmation {
  proposal: RecoveryProposal;
  context: AuditContext;
  input: {
    evidenceDigest: string;
    expectedVersion?: number | null;
    reasonCode?: string | null;
    reason?: string | null;
  };
}

export interface AbandonConfirmed {
  kind: 'abandon';
  proposal: RecoveryProposal;
  executionId: number;
  resultingStatus: 'ABANDONED';
  version: number;
  changed: boolean;
  operatorRequestId: number;
  requestDigestHex: string;
}

/**
 * Step 3 for an ABANDON proposal. The caller holds the proposal lock and the wait and
 * four-eyes rules have passed. Under the execution's row lock the evidence is read
 * again (a different digest or version supersedes the proposal), then the runtime's
 * ABANDON runs: its guard, the transition, and one `ob_operator_request` (ABANDON,
 * DESTRUCTIVE, `keel-proposal-<id>`, the approver as actor), APPLIED or REJECTED.
 */
export async function confirmAbandon(
  deps: RecoveryServiceDeps,
  ports: TakeoverPorts,
  actor: Actor,
  { proposal, context, input }: AbandonConfirmation,
): Promise<ServiceResult<AbandonConfirmed>> {
  if (proposal.target.kind !== 'batch')
    return refuseRecovery(actor, context, 'INVALID_INPUT', 'Only a batch execution can be abandoned.');
  const executionId = proposal.target.executionId;
  if (!can(actor.role, 'abandonExecution')) {
    return refuseRecovery(actor, context, 'FORBIDDEN', `The ${actor.role} role may not abandon an execution.`);
  }
  const reasonCode = input.reasonCode ?? DEFAULT_RECOVERY_REASON_CODE;
  refuseUnlessActorRef(actor, context);
  const locked = await ports.executions.lockForOperatorRequest(executionId);
  if (!locked) return supersede(ports, actor, proposal, context, 'The execution no longer exists.');
  const snapshot = await ports.recovery.recoverySnapshot(executionId, deps.ownerToken);
  if (!snapshot.ok)
    return refuseRecovery(actor, context, 'REPOSITORY_UNAVAILABLE', 'The execution could not be read; try again.');
  const computed = snapshotEvidenceDigestHex(snapshot.value);
  if (!computed.ok)
    return refuseRecovery(
      actor,
      context,
      'INVALID_EVIDENCE',
      `The execution's evidence is malformed (${computed.error.field}).`,
    );
  const digest = computed.value;
  const observed = { status: locked.status, version: locked.version, evidenceDigest: digest };
  if (digest !== proposal.evidenceDigestHex || locked.version !== proposal.expectedVersion) {
    return supersede(
      ports,
      actor,
      proposal,
      context,
      'The execution changed since the proposal; propose again.',
      observed,
    );
  }
  if (input.evidenceDigest !== proposal.evidenceDigestHex || input.expectedVersion !== proposal.expectedVersion) {
    return refuseOtherEvidence(actor, context, observed);
  }
  const requestDigest = executionRequestDigestHex({
    action: 'ABANDON',
    executionId,
    expectedVersion: locked.version,
    reasonCode,
  });
  if (!requestDigest.ok)
    return refuseRecovery(
      actor,
      context,
      'INVALID_INPUT',
      `The abandon request cannot be encoded (${requestDigest.error.kind}).`,
    );
  const operationId = proposalOperationId(proposal.id);
  const draft = {
    action: 'ABANDON' as const,
    operationId,
    actorRef: actor.login,
    reasonCode,
    requestDigestHex: requestDigest.value,
    jobExecutionId: executionId,
    observedVersion: locked.version,
    requestedAtMs: locked.nowMs,
  };
  const auditContext = { ...context, action: 'execution.abandon', digest: requestDigest.value };
  const disposition = abandonDisposition(locked.status, locked.hasRecoveryDecision);
  if (disposition === 'UNRESOLVED_RECOVERY_REQUIRED' || disposition === 'INVALID_STATE') {
    await ports.executions.appendOperatorRequest({
      ...draft,
      jobInstanceId: null,
      priorStatus: null,
      resultStatus: null,
      outcome: 'REJECTED',
      rejectionCode: disposition,
    });
    const message =
      disposition === 'INVALID_STATE'
        ? `An execution in ${locked.status} cannot be abandoned.`
        : 'An UNKNOWN execution can be abandoned only after a recovery decision.';
    // The REJECTED operator request is the runtime's record of this refusal: it commits with the event.
    return refuseRecovery(actor, auditContext, disposition, message, { observed, keeps: 'changes' });
  }
  let version = locked.version;
  if (disposition === 'ABANDON') {
    const abandoned = await ports.executions.abandon(executionId, locked.version, locked.nowMs);
    // The row is locked, so the version cannot have moved; throwing rolls everything back.
    if (!abandoned.ok) throw new Error(`execution ${executionId} moved under its row lock`);
    version = abandoned.value.version;
  }
  const appended = await ports.executions.appendOperatorRequest({
    ...draft,
    jobInstanceId: locked.jobInstanceId,
    priorStatus: locked.status,
    resultStatus: 'ABANDONED',
    outcome: 'APPLIED',
    rejectionCode: null,
  });
  const closed = await ports.proposals.close(proposal.id, {
    status: 'APPROVED',
    decider: { id: actor.id, login: actor.login },
    resultingStatus: 'ABANDONED',
    reasonCode,
    reason: input.reason ?? null,
  });
  if (!closed.ok) throw new Error(`proposal ${proposal.id} left PENDING under its lock`);
  await ports.audit.record({
    ...auditContext,
    actor: auditActor(actor),
    before: { status: locked.status, version: locked.version },
    after: {
      status: 'ABANDONED',
      version,
      operatorRequestId: appended.id,
      reasonCode,
      changed: disposition === 'ABANDON',
    },
    outcome: 'APPLIED',
  });
  return ok({
    kind: 'abandon',
    proposal: closed.value,
    executionId,
    resultingStatus: 'ABANDONED',
    version,
    changed: disposition === 'ABANDON',
    operatorRequestId: appended.id,
    requestDigestHex: requestDigest.value,
  });
}
