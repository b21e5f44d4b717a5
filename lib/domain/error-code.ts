/**
 * Every code a server action or a service answers with (docs/design.md#results-and-error-codes),
 * SCREAMING_SNAKE, in one list: the action wrapper's own, then the services' by area.
 */
export const ERROR_CODES = [
  // action(): before any service runs, or instead of one.
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'INVALID_INPUT',
  'DATABASE_BUSY',
  'INTERNAL',
  // Recovery: takeover and abandon proposals, their decisions, stop requests.
  'INVALID_ACTOR_REF',
  'PROPOSAL_NOT_FOUND',
  'EXECUTION_NOT_FOUND',
  'ORCHESTRATION_NOT_FOUND',
  'PROPOSAL_CANCELLED',
  'PROPOSAL_EXPIRED',
  'PROPOSAL_DECIDED',
  'PROPOSAL_PENDING',
  'WAIT_OWNER_MISMATCH',
  'FOUR_EYES_REQUIRED',
  'REASON_REQUIRED',
  'RECOVERY_EVIDENCE_STALE',
  'ACKNOWLEDGEMENT_REQUIRED',
  'UNRESOLVED_RECOVERY_REQUIRED',
  'INVALID_CHECKPOINT',
  'AUTHENTICATION_FAILED',
  'STALE_LEASE',
  'LEASE_NOT_EXPIRED',
  'CLOCK_EVIDENCE_UNUSABLE',
  'NOT_RECOVERABLE',
  'OWNED_BY_CURRENT_PROCESS',
  'NOT_STALE',
  'INVALID_STALE_THRESHOLD',
  'INVALID_MAX_CLOCK_SKEW',
  'INVALID_EVIDENCE',
  'INVALID_STATE',
  'REPOSITORY_UNAVAILABLE',
  'OPERATION_ID_CONFLICT',
  // Settlements: replay, discard, requeue, bulk jobs.
  'NOT_FOUND',
  'CONFLICT',
  'OPERATION_ID_REUSED',
  'PREVIEW_TOO_LARGE',
  // Users.
  'USER_EXISTS',
  'CANNOT_DISABLE_SELF',
  'CANNOT_DEMOTE_SELF',
  'ROLE_CHANGED',
  // Webhooks.
  'UNKNOWN_ENDPOINT',
  'ALREADY_DELIVERED',
  'DELIVERY_IN_FLIGHT',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

const KNOWN: ReadonlySet<string> = new Set(ERROR_CODES);

export const isErrorCode = (value: unknown): value is ErrorCode => typeof value === 'string' && KNOWN.has(value);

/**
 * The SCREAMING_SNAKE code a server action returns for a PascalCase error kind
 * (docs/design.md#results-and-error-codes): `StaleLease` -> `STALE_LEASE`. A run of capitals stays one word
 * (`HTTPTimeout` -> `HTTP_TIMEOUT`), so codes stay stable when kinds hold acronyms.
 */
export function toErrorCode(kind: string): string {
  return kind
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toUpperCase();
}

/**
 * The listed code of a domain error kind a service answers as it is (`NotStale` -> `NOT_STALE`).
 * A kind without one is a bug of the list, not a refusal: it throws.
 */
export function errorCodeOf(kind: string): ErrorCode {
  const code = toErrorCode(kind);
  if (!isErrorCode(code)) throw new Error(`the error kind ${kind} has no code in ERROR_CODES`);
  return code;
}
