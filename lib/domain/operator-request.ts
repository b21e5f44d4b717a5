import { isBatchStatus, isFinished, STOP_REQUESTABLE_STATUSES, type BatchStatus } from './batch-status';
import { isReasonCode, OPERATION_ID_MAX_LENGTH } from './identifier-patterns';
import { CanonicalWriter } from './canonical-writer';
import { err, type Result } from './result';

/**
 * The runtime's operator requests (`ob_operator_request`): every mutating action is
 * one, with its authorization class, a request digest under `operator-request.v1`,
 * and an APPLIED or REJECTED outcome. Keel makes STOP, ABANDON and RECOVER.
 */
export const OPERATOR_ACTIONS = ['LAUNCH', 'RESTART', 'STOP', 'ABANDON', 'RECOVER'] as const;
export type OperatorAction = (typeof OPERATOR_ACTIONS)[number];
export type AuthorizationClass = 'LIFECYCLE' | 'DESTRUCTIVE';

export const authorizationClassOf = (action: OperatorAction): AuthorizationClass =>
  action === 'ABANDON' || action === 'RECOVER' ? 'DESTRUCTIVE' : 'LIFECYCLE';

/** The runtime's rejection codes Keel can record (the ones its STOP and ABANDON guards produce). */
export type OperatorRejectionCode =
  | 'OPTIMISTIC_CONFLICT'
  | 'INVALID_STATE'
  | 'UNRESOLVED_RECOVERY_REQUIRED'
  | 'EXECUTION_NOT_FOUND';

export type OperatorOutcomeClass = 'APPLIED' | 'REJECTED';

const MAX_U64 = (1n << 64n) - 1n;
const isU64 = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && BigInt(value) <= MAX_U64;

/** STOP and ABANDON of one execution: no arguments beyond the target, version and reason. */
export type ExecutionRequestDigestInput =
  | { action: 'STOP'; executionId: number; expectedVersion: number }
  | { action: 'ABANDON'; executionId: number; expectedVersion: number; reasonCode: string };

export type ExecutionRequestDigestError =
  | { kind: 'InvalidAction' }
  | { kind: 'InvalidExecutionId' }
  | { kind: 'InvalidExpectedVersion' }
  | { kind: 'InvalidReasonCode' };

/**
 * The `request_digest` of a STOP or ABANDON request, as the runtime's `request_digest`
 * computes it: tag `oxide-batch.operator-request.v1`; the action; `execution:<id>`;
 * the expected version as an optional integer; the reason code ("" for STOP, which
 * carries none); then `NONE`, the arguments marker of a request without arguments.
 */
export function executionRequestDigestHex(
  input: ExecutionRequestDigestInput,
): Result<string, ExecutionRequestDigestError> {
  if (typeof input !== 'object' || input === null) return err({ kind: 'InvalidAction' });
  const action: unknown = input.action;
  if (action !== 'STOP' && action !== 'ABANDON') return err({ kind: 'InvalidAction' });
  if (!isU64(input.executionId) || input.executionId === 0) return err({ kind: 'InvalidExecutionId' });
  if (!isU64(input.expectedVersion)) return err({ kind: 'InvalidExpectedVersion' });
  let reason = '';
  if (input.action === 'ABANDON') {
    if (!isReasonCode(input.reasonCode)) return err({ kind: 'InvalidReasonCode' });
    reason = input.reasonCode;
  }
  const digest = new CanonicalWriter('oxide-batch.operator-request.v1')
    .string(input.action)
    .string(`execution:${input.executionId}`)
    .optionalU64(input.expectedVersion)
    .string(reason)
    .string('NONE')
    .digestResult();
  return digest.ok ? digest : err({ kind: 'InvalidExpectedVersion' });
}

/** What the runtime's STOP does to an execution in a status (its `stop` guard). */
export type StopDisposition = 'REQUEST' | 'UNCHANGED' | 'INVALID_STATE';

/**
 * STARTING and STARTED take the request; a repeat (one already requested, STOPPING,
 * or a finished execution) succeeds and changes nothing; UNKNOWN is INVALID_STATE.
 */
export function stopDisposition(status: BatchStatus, stopAlreadyRequested: boolean): StopDisposition {
  if (!isBatchStatus(status)) return 'INVALID_STATE';
  if ((STOP_REQUESTABLE_STATUSES as readonly string[]).includes(status))
    return stopAlreadyRequested ? 'UNCHANGED' : 'REQUEST';
  if (status === 'STOPPING' || isFinished(status)) return 'UNCHANGED';
  return 'INVALID_STATE';
}

/** What the runtime's ABANDON does to an execution in a status (its `abandon` guard). */
export type AbandonDisposition = 'ABANDON' | 'UNCHANGED' | 'UNRESOLVED_RECOVERY_REQUIRED' | 'INVALID_STATE';

/**
 * STOPPED and FAILED become ABANDONED; UNKNOWN only once a recovery decision exists;
 * ABANDONED again changes nothing; anything else is INVALID_STATE.
 */
export function abandonDisposition(status: BatchStatus, hasRecoveryDecision: boolean): AbandonDisposition {
  if (status === 'ABANDONED') return 'UNCHANGED';
  if (status === 'STOPPED' || status === 'FAILED') return 'ABANDON';
  if (status === 'UNKNOWN') return hasRecoveryDecision === true ? 'ABANDON' : 'UNRESOLVED_RECOVERY_REQUIRED';
  return 'INVALID_STATE';
}

/**
 * Keel prefixes every operation id it writes into `ob_operator_request` with this
 * (`keel-proposal-<id>` for a confirmed takeover), so a row tells whether it came
 * through Keel or through the runtime's own operator service (its CLI).
 */
export const KEEL_OPERATION_ID_PREFIX = 'keel-';

/** A stop's operation id from the console, short enough for `keel-stop-<id>` to fit the runtime's varchar(64). */
export const STOP_OPERATION_ID_MAX = OPERATION_ID_MAX_LENGTH - 'keel-stop-'.length;

export type OperatorRequestOrigin = 'keel' | 'runtime';

export const operatorRequestOrigin = (operationId: string): OperatorRequestOrigin =>
  operationId.startsWith(KEEL_OPERATION_ID_PREFIX) ? 'keel' : 'runtime';

/** One `ob_operator_request` row as the console shows it. */
export interface OperatorRequestEntry {
  id: number;
  action: string;
  authorizationClass: string;
  operationId: string;
  origin: OperatorRequestOrigin;
  actorRef: string;
  reasonCode: string | null;
  requestDigest: string;
  observedVersion: number | null;
  priorStatus: string | null;
  resultStatus: string | null;
  outcome: string;
  rejectionCode: string | null;
  requestedAt: string;
}
