import 'server-only';
import type { Actor } from '../domain/actor';
import { err, type Result } from '../domain/result';
import { textProblem } from '../domain/text';
import type { AuditLog } from '../ports/audit-log';
import type { ProposalStatus } from '../domain/proposal-status';
import type { ProposalTarget, RecoveryProposal } from '../ports/proposal-repository';
import type { ProposerClock } from '../ports/proposer-clock';
import type { TakeoverPorts } from '../ports/takeover-ports';
import type { UnitOfWork } from '../ports/unit-of-work';

export interface RecoverySettings {
  staleThresholdMs: number;
  maxClockSkewMs: number;
  proposalTtlMs: number;
  orchestrationLeaseMs: number;
}

/** What the recovery use cases run on. */
export interface RecoveryServiceDeps {
  uow: UnitOfWork<TakeoverPorts>;
  clock: ProposerClock;
  settings: RecoverySettings;
  /** This process's owner token: handed to the snapshot read, compared in SQL, never returned. */
  ownerToken: Uint8Array;
}

export type RecoveryErrorCode =
  | 'FORBIDDEN'
  | 'INVALID_INPUT'
  | 'INVALID_ACTOR_REF'
  | 'PROPOSAL_NOT_FOUND'
  | 'EXECUTION_NOT_FOUND'
  | 'ORCHESTRATION_NOT_FOUND'
  | 'PROPOSAL_CANCELLED'
  | 'PROPOSAL_EXPIRED'
  | 'PROPOSAL_DECIDED'
  | 'WAIT_OWNER_MISMATCH'
  | 'FOUR_EYES_REQUIRED'
  | 'RECOVERY_EVIDENCE_STALE'
  | 'ACKNOWLEDGEMENT_REQUIRED'
  | 'UNRESOLVED_RECOVERY_REQUIRED'
  | 'INVALID_CHECKPOINT'
  | 'AUTHENTICATION_FAILED'
  | 'STALE_LEASE'
  | 'LEASE_NOT_EXPIRED'
  | 'CLOCK_EVIDENCE_UNUSABLE'
  | 'NOT_RECOVERABLE'
  | 'OWNED_BY_CURRENT_PROCESS'
  | 'NOT_STALE'
  | 'INVALID_STALE_THRESHOLD'
  | 'INVALID_MAX_CLOCK_SKEW'
  | 'NOT_ACTIVE'
  | 'STOP_ALREADY_REQUESTED'
  | 'REPOSITORY_UNAVAILABLE'
  | 'INVALID_EVIDENCE'
  | 'INVALID_STATE'
  | 'OPTIMISTIC_CONFLICT'
  | 'OPERATION_ID_CONFLICT'
  | 'PROPOSAL_PENDING'
  | 'REASON_REQUIRED';

export interface RecoveryFailure {
  code: RecoveryErrorCode;
  message: string;
  /** PROPOSAL_DECIDED: who closed the proposal, and how. */
  decidedBy?: string | null;
  proposalStatus?: ProposalStatus;
}

export type ServiceResult<T> = Result<T, RecoveryFailure>;

export const failure = (
  code: RecoveryErrorCode,
  message: string,
  extra: Partial<RecoveryFailure> = {},
): RecoveryFailure => ({
  code,
  message,
  ...extra,
});

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

/** Records the refusal in the current transaction and returns it: a refusal commits its audit event. */
export async function refuse(
  audit: AuditLog,
  actor: Actor,
  context: AuditContext,
  refusal: RecoveryFailure,
  before?: unknown,
): Promise<{ ok: false; error: RecoveryFailure }> {
  await audit.record({
    ...context,
    actor: auditActor(actor),
    before: before ?? null,
    after: { message: refusal.message },
    outcome: 'REFUSED',
    code: refusal.code,
  });
  return err(refusal);
}

export const isPositiveId = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value > 0;

export const isCount = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

const MAX_TEXT = 2_000;
/** Free text (notes, reasons): optional, bounded, stored as given. */
export const isOptionalText = (value: unknown): value is string | null | undefined =>
  value === undefined || value === null || (typeof value === 'string' && value.length <= MAX_TEXT);

/** The same bounds as the other reasons typed in a dialog (multiLineText(500) in the action schemas). */
export const REQUEST_REASON_MAX = 500;
export const REQUEST_REASON_MESSAGE = 'Say why the takeover is needed: the approver reads it before deciding.';

/** The trimmed reason for a request, or null when it is missing, empty, too long or not valid text. */
export function requestReason(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  if (trimmed === '' || trimmed.length > REQUEST_REASON_MAX || textProblem(trimmed, { multiline: true })) return null;
  return trimmed;
}
