/**
 * Per-account sign-in lockout (docs/security.md, "Client address and rate limits").
 * Failed sign-ins are counted per username whatever the client address; after
 * FAILURES_BEFORE_LOCK failures within FAILURE_WINDOW_MS the username is locked for
 * FIRST_LOCK_MS, doubling with each further lockout up to MAX_LOCK_MS. A successful
 * sign-in forgets the username's state.
 */
export const LOCKOUT_POLICY = {
  failuresBeforeLock: 5,
  failureWindowMs: 15 * 60_000,
  firstLockMs: 30_000,
  maxLockMs: 15 * 60_000,
  /** A username whose last lockout ended this long ago starts again at the first step. */
  forgetLockoutsAfterMs: 24 * 60 * 60_000,
} as const;

export type LockoutPolicy = typeof LOCKOUT_POLICY;

export interface LockoutState {
  failures: number;
  /** Lockouts so far in this streak; the next one lasts firstLockMs * 2^lockouts. */
  lockouts: number;
  lastFailureAt: Date | null;
  lockedUntil: Date | null;
}

export const NO_LOCKOUT: LockoutState = Object.freeze({
  failures: 0,
  lockouts: 0,
  lastFailureAt: null,
  lockedUntil: null,
});

/** Milliseconds left on a lock at `now`, or 0 when the username may try. */
export function lockRemainingMs(state: LockoutState, now: Date): number {
  if (!state.lockedUntil) return 0;
  return Math.max(0, state.lockedUntil.getTime() - now.getTime());
}

export function lockDurationMs(lockouts: number, policy: LockoutPolicy = LOCKOUT_POLICY): number {
  // 2^lockouts, without overflowing for absurd counts.
  const factor = 2 ** Math.min(lockouts, 30);
  return Math.min(policy.firstLockMs * factor, policy.maxLockMs);
}

/** The state after one more failed sign-in at `now`, and whether that failure started a lock. */
export function afterFailure(
  state: LockoutState,
  now: Date,
  policy: LockoutPolicy = LOCKOUT_POLICY,
): { state: LockoutState; locked: boolean; lockMs: number } {
  const t = now.getTime();
  const streakOver = state.lockedUntil !== null && t - state.lockedUntil.getTime() >= policy.forgetLockoutsAfterMs;
  const lockouts = streakOver ? 0 : state.lockouts;
  const recent = state.lastFailureAt !== null && t - state.lastFailureAt.getTime() < policy.failureWindowMs;
  const failures = (recent && !streakOver ? state.failures : 0) + 1;
  if (failures < policy.failuresBeforeLock) {
    return {
      state: { failures, lockouts, lastFailureAt: now, lockedUntil: streakOver ? null : state.lockedUntil },
      locked: false,
      lockMs: 0,
    };
  }
  const lockMs = lockDurationMs(lockouts, policy);
  return {
    state: { failures: 0, lockouts: lockouts + 1, lastFailureAt: now, lockedUntil: new Date(t + lockMs) },
    locked: true,
    lockMs,
  };
}

/** The key a username is counted under: the username plugin compares lower-cased names. */
export function lockoutKey(username: string): string {
  return username.trim().toLowerCase().slice(0, 128);
}
