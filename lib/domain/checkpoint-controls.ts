import {
  invalidCheckpoint,
  isBlank,
  type CheckpointErrorOf,
  type CompensationStep,
  type DurableCheckpoint,
  type DurableWait,
} from './checkpoint-model';
import { totalResult, err, ok, type Result } from './result';

/**
 * Hands the execution to a new owner. Both the token and the expiry must strictly
 * advance so a delayed or replayed transfer can never win. The result carries an empty
 * tag: it must be re-sealed and saved in the same transaction.
 */
function acquireLeaseUnchecked(
  checkpoint: DurableCheckpoint,
  ownerId: string,
  fencingToken: number,
  expiresAt: number,
): Result<DurableCheckpoint, CheckpointErrorOf<'InvalidCheckpoint' | 'StaleLease'>> {
  // `>` is false for NaN, so a NaN token or expiry never advances.
  const advances = fencingToken > checkpoint.lease.fencingToken && expiresAt > checkpoint.lease.expiresAt;
  if (isBlank(ownerId) || !advances) {
    return err({ kind: 'StaleLease' });
  }
  return ok({ ...checkpoint, lease: { ownerId, fencingToken, expiresAt }, authenticationTag: '' });
}

/** Returns the declared backoff units when one more retry is allowed. */
function authorizeRetryUnchecked(
  checkpoint: DurableCheckpoint,
  attemptsUsed: number,
  budgetUsed: number,
): Result<number, CheckpointErrorOf<'InvalidCheckpoint' | 'RetryNotDeclared' | 'RetryBudgetExhausted'>> {
  const policy = checkpoint.retry;
  // Without an idempotency key a retry could repeat an external effect.
  if (!policy?.retryable || isBlank(policy.idempotencyKey)) return err({ kind: 'RetryNotDeclared' });
  if (!(attemptsUsed < policy.maxAttempts) || !(budgetUsed < policy.budgetUnits)) {
    return err({ kind: 'RetryBudgetExhausted' });
  }
  return ok(policy.backoffUnits);
}

export interface WakeRequest {
  ownerId: string;
  nowMs: number;
  cancelled: boolean;
}

/**
 * The wait rules on their own, so a human-approval wait held outside a checkpoint (a
 * recovery proposal's) is judged the same way. Cancellation wins over everything.
 */
function evaluateWakeUnchecked(
  wait: DurableWait,
  request: WakeRequest,
): Result<DurableWait, CheckpointErrorOf<'InvalidCheckpoint' | 'Cancelled' | 'WaitExpired' | 'StaleLease'>> {
  if (request.cancelled) return err({ kind: 'Cancelled' });
  // The deadline itself is still on time; NaN counts as late.
  if (!(request.nowMs <= wait.deadline)) return err({ kind: 'WaitExpired' });
  if (request.ownerId !== wait.ownerId) return err({ kind: 'StaleLease' });
  return ok(wait);
}

/** Wakes the checkpoint's wait; a checkpoint that is not waiting has nothing to wake. */
function wakeWaitUnchecked(
  checkpoint: DurableCheckpoint,
  request: WakeRequest,
): Result<DurableWait, CheckpointErrorOf<'InvalidCheckpoint' | 'Cancelled' | 'WaitExpired' | 'StaleLease'>> {
  if (!checkpoint.wait) return err(invalidCheckpoint('checkpoint has no wait to wake'));
  return evaluateWake(checkpoint.wait, request);
}

/**
 * The compensation steps in reverse order, refused as a whole unless every step is bound
 * to the given authorization digest: a partial undo is worse than none.
 */
function compensationPlanUnchecked(
  checkpoint: DurableCheckpoint,
  authorizationDigest: string,
): Result<CompensationStep[], CheckpointErrorOf<'InvalidCheckpoint' | 'CompensationUnauthorized'>> {
  // A blank digest would otherwise authorize steps that carry a blank digest.
  const unauthorized =
    isBlank(authorizationDigest) ||
    checkpoint.compensation.some(
      (step) => step.authorizationDigest !== authorizationDigest || isBlank(step.capabilityId),
    );
  if (unauthorized) return err({ kind: 'CompensationUnauthorized' });
  // Array.prototype.sort is stable, so steps sharing an order keep their stored sequence.
  return ok(checkpoint.compensation.map((step) => ({ ...step })).sort((a, b) => b.order - a.order));
}

// Malformed input (a missing field, a wrong type) is an error value or a safe answer, never a throw.
export const acquireLease = totalResult(acquireLeaseUnchecked, (reason) => ({
  kind: 'InvalidCheckpoint' as const,
  reason: `malformed input: ${reason}`,
}));
export const authorizeRetry = totalResult(authorizeRetryUnchecked, (reason) => ({
  kind: 'InvalidCheckpoint' as const,
  reason: `malformed input: ${reason}`,
}));
export const evaluateWake = totalResult(evaluateWakeUnchecked, (reason) => ({
  kind: 'InvalidCheckpoint' as const,
  reason: `malformed input: ${reason}`,
}));
export const wakeWait = totalResult(wakeWaitUnchecked, (reason) => ({
  kind: 'InvalidCheckpoint' as const,
  reason: `malformed input: ${reason}`,
}));
export const compensationPlan = totalResult(compensationPlanUnchecked, (reason) => ({
  kind: 'InvalidCheckpoint' as const,
  reason: `malformed input: ${reason}`,
}));
