import { totalValue, totalResult, err, ok, type Result } from './result';
import {
  MAX_U32,
  invalidRecord,
  isFailureCode,
  isRetryableFailureCode,
  isSha256Hex,
  isSkipReason,
  type InvalidRecord,
  type SettlementOutcome,
  type SettlementRoute,
} from './settlement-vocabulary';

export * from './settlement-vocabulary';
export * from './settlement-records';

export const MAX_SETTLEMENT_WORKER_ID_BYTES = 128;
export const MAX_SETTLEMENT_LEASE_MS = 86_400_000;
export const MAX_SETTLEMENT_CLAIM_BATCH = 1024;

export type ClaimValidationError = { kind: 'WorkerIdLength' } | { kind: 'LeaseDuration' } | { kind: 'ClaimBatch' };

export interface ClaimParams {
  workerId: string;
  leaseMs: number;
  limit: number;
}

const isIntegerIn = (value: number, min: number, max: number): boolean =>
  Number.isInteger(value) && value >= min && value <= max;

/**
 * The claim bounds (docs/design.md#settlement-claims). The worker
 * id is bounded in UTF-8 bytes, as the runtime's `str::len`.
 */
function validateClaimParamsUnchecked(params: ClaimParams): Result<ClaimParams, ClaimValidationError> {
  const workerIdBytes = Buffer.byteLength(params.workerId, 'utf8');
  if (workerIdBytes === 0 || workerIdBytes > MAX_SETTLEMENT_WORKER_ID_BYTES) return err({ kind: 'WorkerIdLength' });
  if (!isIntegerIn(params.leaseMs, 1, MAX_SETTLEMENT_LEASE_MS)) return err({ kind: 'LeaseDuration' });
  if (!isIntegerIn(params.limit, 1, MAX_SETTLEMENT_CLAIM_BATCH)) return err({ kind: 'ClaimBatch' });
  return ok(params);
}

/** A row as its claim left it; `recordClaimedOutcome` commits only while the row still equals it. */
export interface SettlementAttemptClaim {
  receiptId: string;
  finalizedAt: number;
  /** Hook invocations completed before this claim. */
  attempts: number;
  rowVersion: number;
  leaseOwner: string;
  leaseToken: string;
  /** Exclusive: the claim is dead once `leaseUntilMs <= observedAtMs`. */
  leaseUntilMs: number;
}

export interface RetryPolicy {
  /** Retries after the first attempt; 0 dead-letters the first retryable failure. */
  maxRetries: number;
  initialBackoffMs: number;
  backoffMultiplier: number;
  backoffCapMs: number;
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxRetries: 5,
  initialBackoffMs: 250,
  backoffMultiplier: 2,
  backoffCapMs: 60_000,
});
export const MAX_RETRY_POLICY_RETRIES = 32;
export const MAX_RETRY_POLICY_MULTIPLIER = 16;
export const MAX_RETRY_POLICY_CAP_MS = 86_400_000;

/** The runtime's `RetryPolicy::validate`, in its order; a bad policy is an InvalidRecord. */
function validateRetryPolicyUnchecked(policy: RetryPolicy): Result<RetryPolicy, InvalidRecord> {
  const { maxRetries, initialBackoffMs, backoffMultiplier, backoffCapMs } = policy;
  if (!isIntegerIn(maxRetries, 0, MAX_RETRY_POLICY_RETRIES)) {
    return err(invalidRecord(`max_retries must be an integer in 0..=32: ${maxRetries}`));
  }
  if (initialBackoffMs === 0) return err(invalidRecord('initial_backoff_ms must be nonzero'));
  if (!Number.isSafeInteger(initialBackoffMs) || initialBackoffMs < 0) {
    return err(invalidRecord(`initial_backoff_ms must be a positive integer: ${initialBackoffMs}`));
  }
  if (backoffCapMs === 0) return err(invalidRecord('backoff_cap_ms must be nonzero'));
  if (!isIntegerIn(backoffCapMs, 1, MAX_RETRY_POLICY_CAP_MS)) {
    return err(invalidRecord(`backoff_cap_ms must be an integer at most 86400000: ${backoffCapMs}`));
  }
  if (initialBackoffMs > backoffCapMs) {
    return err(invalidRecord(`initial_backoff_ms ${initialBackoffMs} exceeds backoff_cap_ms ${backoffCapMs}`));
  }
  if (!isIntegerIn(backoffMultiplier, 1, MAX_RETRY_POLICY_MULTIPLIER)) {
    return err(invalidRecord(`backoff_multiplier must be an integer in 1..=16: ${backoffMultiplier}`));
  }
  return ok(policy);
}

/**
 * `min(initial * multiplier^attempts, cap)`, no jitter, for a validated policy. It stops
 * multiplying once the cap is reached, so the delay never grows past `cap * multiplier`
 * (exact in a double) whatever the attempt count: the runtime's saturating arithmetic.
 */
function backoffMsUnchecked(policy: RetryPolicy, attempts: number): number {
  const { initialBackoffMs, backoffCapMs } = policy;
  // The runtime treats a zero multiplier as one: the delay stays at its initial value.
  const multiplier = Math.max(policy.backoffMultiplier, 1);
  let delay = initialBackoffMs;
  if (multiplier > 1) {
    for (let step = 0; step < attempts && delay < backoffCapMs; step += 1) delay *= multiplier;
  }
  return Math.min(delay, backoffCapMs);
}

function outcomeProblem(outcome: SettlementOutcome): string | null {
  if (outcome.kind === 'Skipped' && !isSkipReason(outcome.reason)) return `unknown skip reason ${outcome.reason}`;
  if ((outcome.kind === 'Retryable' || outcome.kind === 'Permanent') && !isFailureCode(outcome.code)) {
    return `unknown settlement failure code ${outcome.code}`;
  }
  if ('detailSha256' in outcome && outcome.detailSha256 !== undefined && !isSha256Hex(outcome.detailSha256)) {
    return 'detail_sha256 is not 32 bytes of hex';
  }
  return null;
}

/**
 * Where a claimed outcome goes (docs/design.md#settlement-outcomes). `attempts` is the claim's count before
 * this invocation; `observedAtMs` is both the lease check time and the retry base.
 */
function routeOutcomeUnchecked(
  attempts: number,
  outcome: SettlementOutcome,
  policy: RetryPolicy,
  observedAtMs: number,
): Result<SettlementRoute, InvalidRecord> {
  const valid = validateRetryPolicy(policy);
  if (!valid.ok) return valid;
  if (!isIntegerIn(attempts, 0, MAX_U32)) return err(invalidRecord(`attempts is not a u32: ${attempts}`));
  if (!isIntegerIn(observedAtMs, 0, Number.MAX_SAFE_INTEGER)) {
    return err(invalidRecord(`observed_at_ms is not an integer below 2^53: ${observedAtMs}`));
  }
  const problem = outcomeProblem(outcome);
  if (problem !== null) return err(invalidRecord(problem));
  if (outcome.kind === 'Accepted' || outcome.kind === 'Skipped') return ok({ kind: 'NoAction' });

  const retry = outcome.kind === 'Retryable' && isRetryableFailureCode(outcome.code) && attempts < policy.maxRetries;
  if (retry) {
    // attempts < maxRetries <= 32, so only the visibility deadline can overflow.
    const nextVisibleAtMs = observedAtMs + backoffMs(policy, attempts);
    if (!Number.isSafeInteger(nextVisibleAtMs)) {
      return err(invalidRecord('settlement visibility deadline exceeds 2^53'));
    }
    return ok({ kind: 'RetryScheduled', attempt: attempts + 1, nextVisibleAtMs });
  }
  if (attempts === MAX_U32) return err(invalidRecord('settlement attempt count overflows u32'));
  return ok({ kind: 'DeadLettered', attempts: attempts + 1 });
}

// Malformed input (a missing field, a wrong type) is an error value or a safe answer, never a throw.
export const validateClaimParams = totalResult(validateClaimParamsUnchecked, () => ({
  kind: 'WorkerIdLength' as const,
}));
export const validateRetryPolicy = totalResult(validateRetryPolicyUnchecked, (reason) => ({
  kind: 'InvalidRecord' as const,
  detail: `malformed input: ${reason}`,
}));
export const routeOutcome = totalResult(routeOutcomeUnchecked, (reason) => ({
  kind: 'InvalidRecord' as const,
  detail: `malformed input: ${reason}`,
}));
export const backoffMs = totalValue(backoffMsUnchecked, Number.NaN);
