import { describe, expect, it } from 'vitest';
import {
  afterFailure,
  LOCKOUT_POLICY,
  lockDurationMs,
  lockoutKey,
  lockRemainingMs,
  NO_LOCKOUT,
  type LockoutState,
} from '../../lib/domain/sign-in-lockout';

const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms);

function fail(times: number, state: LockoutState, startMs: number): { state: LockoutState; locks: number[] } {
  const locks: number[] = [];
  for (let i = 0; i < times; i += 1) {
    const next = afterFailure(state, at(startMs + i));
    if (next.locked) locks.push(next.lockMs);
    state = next.state;
  }
  return { state, locks };
}

describe('sign-in lockout', () => {
  it('locks after five failures for 30 s', () => {
    const four = fail(4, NO_LOCKOUT, 0);
    expect(four.locks).toEqual([]);
    expect(lockRemainingMs(four.state, at(10))).toBe(0);
    const five = afterFailure(four.state, at(10));
    expect(five.locked).toBe(true);
    expect(five.lockMs).toBe(30_000);
    expect(lockRemainingMs(five.state, at(10))).toBe(30_000);
    expect(lockRemainingMs(five.state, at(30_010))).toBe(0);
  });

  it('doubles each further lockout and caps it at 15 minutes', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 40].map((n) => lockDurationMs(n))).toEqual([
      30_000, 60_000, 120_000, 240_000, 480_000, 900_000, 900_000, 900_000,
    ]);
    let state = NO_LOCKOUT;
    const locks: number[] = [];
    for (let round = 0; round < 3; round += 1) {
      const start = round * 3_600_000; // each round after the previous lock ended
      const result = fail(5, state, start);
      locks.push(...result.locks);
      state = result.state;
    }
    expect(locks).toEqual([30_000, 60_000, 120_000]);
  });

  it('forgets failures older than the window', () => {
    const four = fail(4, NO_LOCKOUT, 0);
    const late = afterFailure(four.state, at(LOCKOUT_POLICY.failureWindowMs + 10));
    expect(late.locked).toBe(false);
    expect(late.state.failures).toBe(1);
  });

  it('starts the doubling again a day after the last lock ended', () => {
    const first = fail(5, NO_LOCKOUT, 0);
    const second = fail(5, first.state, 60_000 + LOCKOUT_POLICY.forgetLockoutsAfterMs);
    expect(second.locks).toEqual([30_000]);
  });

  it('counts one username however it is typed', () => {
    expect(lockoutKey('  Admin ')).toBe('admin');
    expect(lockoutKey('x'.repeat(500))).toHaveLength(128);
  });
});
