import 'server-only';
import { randomUUID } from 'node:crypto';
import { mayTake } from '../domain/roles';
import type { Actor } from '../domain/actor';
import type { CandidateAssessment } from '../domain/candidate-assessment';
import { humanDuration } from '../domain/duration';
import { errorCodeOf, type ErrorCode } from '../domain/error-code';
import { evaluateCandidate, orchestrationEvidenceDigestHex, type ProposerError } from '../domain/recovery';
import { err, ok } from '../domain/result';
import type { ProposalTarget, RecoveryProposal } from '../ports/proposal-repository';
import type { RecoveryRepositoryError } from '../ports/recovery-repository';
import type { TakeoverPorts } from '../ports/takeover-ports';
import { livePendingProposal } from './expire-proposals';
import { serviceError, transact, type ServiceError, type ServiceResult } from './kernel';
import {
  auditActor,
  auditTarget,
  proposalOperationId,
  refuseRecovery,
  type RecoveryServiceDeps,
} from './recovery-common';

/** `reason`: why the takeover is asked for; required, so the approver decides knowing it. */
export type ProposeRecoveryInput =
  | { target: 'batch'; executionId: number; reason: string }
  | { target: 'orchestration'; executionId: string; successorOwner: string; reason: string };

export interface ProposeRecoveryValue {
  proposal: RecoveryProposal;
  /** False when a proposal for the target was already pending: that one is returned. */
  created: boolean;
}

/** What a proposal binds besides its target: the evidence and what a confirmation must still find. */
interface Candidate {
  evidence: unknown;
  evidenceDigestHex: string;
  expectedVersion: number | null;
  expectedFencingToken: number | null;
  successorOwner: string | null;
}

const targetOf = (input: ProposeRecoveryInput): ProposalTarget =>
  input.target === 'batch'
    ? { kind: 'batch', executionId: input.executionId }
    : { kind: 'orchestration', executionId: input.executionId };

function proposerMessage(error: ProposerError): string {
  switch (error.kind) {
    case 'InvalidStaleThreshold':
      return (
        `The configured stale threshold ${humanDuration(error.valueMs)} is outside ` +
        `${humanDuration(error.minMs)} to ${humanDuration(error.maxMs)}.`
      );
    case 'InvalidMaxClockSkew':
      return (
        `The configured maximum clock skew ${humanDuration(error.valueMs)} is outside ` +
        `${humanDuration(error.minMs)} to ${humanDuration(error.maxMs)}.`
      );
    case 'ClockEvidenceUnusable':
      return `The clocks cannot support a staleness judgement (${error.reason}).`;
    case 'NotRecoverable':
      return `An execution in ${error.status} is not a recovery candidate.`;
    case 'OwnedByCurrentProcess':
      return 'This Keel process owns the execution.';
    case 'NotStale':
      return (
        `Inactive for ${humanDuration(error.inactivityMs)}, ` +
        `which is not above the ${humanDuration(error.thresholdMs)} threshold.`
      );
    case 'InvalidEvidence':
      return `The execution's evidence is malformed (${error.field}).`;
  }
}

function repositoryFailure(error: RecoveryRepositoryError): ServiceError {
  if (error.kind === 'ExecutionNotFound')
    return serviceError('EXECUTION_NOT_FOUND', `Execution ${error.executionId} does not exist.`);
  return serviceError('REPOSITORY_UNAVAILABLE', 'The execution could not be read; try again.');
}

/** Reads the snapshot with its clock evidence around it and applies the proposer rules. */
async function batchCandidate(
  deps: RecoveryServiceDeps,
  ports: TakeoverPorts,
  executionId: number,
): Promise<ServiceResult<Candidate>> {
  const lastServerTimeMs = deps.clock.lastServerTimeMs();
  const readStartedMonoMs = deps.clock.monotonicMs();
  const snapshot = await ports.recovery.recoverySnapshot(executionId, deps.ownerToken);
  const readFinishedMonoMs = deps.clock.monotonicMs();
  const localWallMs = deps.clock.wallMs();
  if (!snapshot.ok) return err(repositoryFailure(snapshot.error));
  const evidence = evaluateCandidate(snapshot.value, {
    thresholdMs: deps.settings.staleThresholdMs,
    maxSkewMs: deps.settings.maxClockSkewMs,
    lastServerTimeMs,
    readStartedMonoMs,
    readFinishedMonoMs,
    localWallMs,
  });
  deps.clock.observeServerTime(snapshot.value.serverTimeMs);
  if (!evidence.ok) {
    return err(serviceError(errorCodeOf(evidence.error.kind), proposerMessage(evidence.error)));
  }
  return ok({
    // The rules' settings are kept beside the evidence (outside the digest) so the
    // proposal page shows the threshold the evidence was judged against.
    evidence: {
      ...evidence.value,
      staleThresholdMs: deps.settings.staleThresholdMs,
      maxClockSkewMs: deps.settings.maxClockSkewMs,
    },
    evidenceDigestHex: evidence.value.digestHex,
    expectedVersion: evidence.value.version,
    expectedFencingToken: null,
    successorOwner: null,
  });
}

/** An orchestration is a candidate once its authenticated lease has expired by the server's clock. */
async function orchestrationCandidate(
  ports: TakeoverPorts,
  executionId: string,
  successorOwner: string,
): Promise<ServiceResult<Candidate>> {
  const loaded = await ports.checkpoints.load(executionId);
  if (!loaded.ok)
    return err(serviceError('INVALID_CHECKPOINT', `The stored checkpoint is not valid: ${loaded.error.reason}.`));
  if (!loaded.value)
    return err(serviceError('ORCHESTRATION_NOT_FOUND', `Orchestration ${executionId} has no checkpoint.`));
  const { checkpoint, serverTimeMs } = loaded.value;
  if (!ports.checkpoints.verify(checkpoint)) {
    return err(
      serviceError('AUTHENTICATION_FAILED', 'The checkpoint does not authenticate; its lease cannot be trusted.'),
    );
  }
  if (!(checkpoint.lease.expiresAt <= serverTimeMs)) {
    return err(serviceError('LEASE_NOT_EXPIRED', `The lease held by ${checkpoint.lease.ownerId} has not expired.`));
  }
  const observed = {
    executionId,
    authenticationTag: checkpoint.authenticationTag,
    fencingToken: checkpoint.lease.fencingToken,
    expiresAtMs: checkpoint.lease.expiresAt,
    leaseOwner: checkpoint.lease.ownerId,
  };
  const digest = orchestrationEvidenceDigestHex(observed);
  if (!digest.ok)
    return err(serviceError('INVALID_CHECKPOINT', `The stored checkpoint is not valid: ${digest.error.field}.`));
  const evidenceDigestHex = digest.value;
  return ok({
    evidence: { ...observed, serverTimeMs, digestHex: evidenceDigestHex },
    evidenceDigestHex,
    expectedVersion: null,
    expectedFencingToken: checkpoint.lease.fencingToken,
    successorOwner,
  });
}

/**
 * Step 1 of the guarded takeover (docs/design.md#guarded-takeover): read the evidence, apply the
 * proposer rules, and store a PENDING proposal with its human-approval wait. While
 * one is pending for the target, that one is returned instead.
 */
export async function proposeRecovery(
  deps: RecoveryServiceDeps,
  actor: Actor,
  input: ProposeRecoveryInput,
): Promise<ServiceResult<ProposeRecoveryValue>> {
  const target = targetOf(input);
  const context = { action: 'recovery.propose', target: auditTarget(target), reason: input.reason };
  // Every refusal keeps what livePendingProposal may have done on the way, the expiry of a
  // proposal past its deadline; nothing else is written before one.
  function refuseRequest(code: ErrorCode, message: string): never {
    return refuseRecovery(actor, context, code, message, { keeps: 'changes' });
  }
  return transact(deps.unitOfWork, async (ports) => {
    if (!mayTake(actor.role, 'recovery.propose'))
      refuseRequest('FORBIDDEN', `The ${actor.role} role may not propose a recovery.`);
    const record = async (proposal: RecoveryProposal, created: boolean) => {
      await ports.audit.record({
        ...context,
        actor: auditActor(actor),
        operationId: proposalOperationId(proposal.id),
        digest: proposal.evidenceDigestHex,
        after: {
          proposalId: proposal.id,
          created,
          expectedVersion: proposal.expectedVersion,
          expectedFencingToken: proposal.expectedFencingToken,
        },
        outcome: 'APPLIED',
      });
      return ok({ proposal, created });
    };
    const abandonPending = (pending: RecoveryProposal) =>
      refuseRequest(
        'PROPOSAL_PENDING',
        `Abandon proposal ${pending.id} is pending for this execution; decide it first.`,
      );
    const pending = await livePendingProposal(ports, target);
    if (pending) return pending.kind === 'TAKEOVER' ? record(pending, false) : abandonPending(pending);
    const candidate =
      input.target === 'batch'
        ? await batchCandidate(deps, ports, input.executionId)
        : await orchestrationCandidate(ports, input.executionId, input.successorOwner);
    if (!candidate.ok) return refuseRequest(candidate.error.code, candidate.error.message);
    const { created, proposal } = await ports.proposals.createPending({
      ...candidate.value,
      target,
      proposer: { id: actor.id, login: actor.login },
      note: input.reason,
      ttlMs: deps.settings.proposalTtlMs,
      cancellationId: randomUUID(),
    });
    // A concurrent request may have won the target with an abandon proposal.
    if (proposal.kind !== 'TAKEOVER') return abandonPending(proposal);
    return record(proposal, created);
  });
}

export type { CandidateAssessment };

/**
 * Whether a proposal for this execution would be accepted now, and if not why, by
 * the same rules `proposeRecovery` applies; it writes nothing.
 */
export async function assessBatchCandidate(
  deps: RecoveryServiceDeps,
  executionId: number,
): Promise<CandidateAssessment> {
  const candidate = await deps.unitOfWork.transaction((ports) => batchCandidate(deps, ports, executionId));
  return candidate.ok
    ? { candidate: true, code: null, message: null }
    : { candidate: false, code: candidate.error.code, message: candidate.error.message };
}
