import { describe, expect, it } from 'vitest';
import type { BatchStatus } from '@/lib/domain/batch-status';
import {
  evaluateCandidate,
  snapshotEvidenceDigestHex,
  validateProposerSettings,
  type CandidateClock,
  type RecoverySnapshot,
} from '@/lib/domain/recovery';

const failure = (kind: string, extra: object = {}) => ({ ok: false, error: { kind, ...extra } });

const NOW = 1_700_000_000_000;
const THRESHOLD = 900_000;
const SKEW = 5_000;

/** A STARTED execution owned by another process, silent for 20 minutes. */
const stale: RecoverySnapshot = {
  executionId: 7,
  status: 'STARTED',
  attempt: 1,
  version: 3,
  updatedAtMs: NOW - 1_200_000,
  serverTimeMs: NOW,
  owner: 'OTHER_PROCESS',
  latestStep: { id: 9, status: 'STARTED', checkpoint: null },
  markers: {
    unknownCommit: false,
    completedPartition: false,
    committedFlowDecision: false,
    ambiguousExternalEffect: true,
  },
};

const clock: CandidateClock = {
  thresholdMs: THRESHOLD,
  maxSkewMs: SKEW,
  lastServerTimeMs: NOW - 60_000,
  readStartedMonoMs: 1_000,
  readFinishedMonoMs: 1_012,
  localWallMs: NOW + 40,
};

const unusable = (reason: string) => failure('ClockEvidenceUnusable', { reason });

describe('validateProposerSettings', () => {
  it.each([
    [60_000, 100],
    [900_000, 5_000],
    [86_400_000, 60_000],
  ])('accepts threshold %d ms and skew %d ms', (thresholdMs, maxSkewMs) => {
    expect(validateProposerSettings({ thresholdMs, maxSkewMs })).toEqual({
      ok: true,
      value: { thresholdMs, maxSkewMs },
    });
  });

  it.each([59_999, 86_400_001, Number.NaN])('refuses threshold %d ms with its bounds', (thresholdMs) => {
    expect(validateProposerSettings({ thresholdMs, maxSkewMs: 5_000 })).toEqual(
      failure('InvalidStaleThreshold', { valueMs: thresholdMs, minMs: 60_000, maxMs: 86_400_000 }),
    );
  });

  it.each([99, 60_001])('refuses skew %d ms with its bounds', (maxSkewMs) => {
    expect(validateProposerSettings({ thresholdMs: 900_000, maxSkewMs })).toEqual(
      failure('InvalidMaxClockSkew', { valueMs: maxSkewMs, minMs: 100, maxMs: 60_000 }),
    );
  });

  it('reports the threshold first when both are out of range', () => {
    expect(validateProposerSettings({ thresholdMs: 1, maxSkewMs: 1 })).toMatchObject(failure('InvalidStaleThreshold'));
  });
});

describe('evaluateCandidate', () => {
  it('returns the snapshot, its clock evidence and its digest for a stale candidate', () => {
    const result = evaluateCandidate(stale, clock);
    expect(result).toEqual({
      ok: true,
      value: {
        ...stale,
        inactivityMs: 1_200_000,
        clockOffsetMs: 40,
        observationWindowMs: 12,
        digestHex: (snapshotEvidenceDigestHex(stale) as { value: string }).value,
      },
    });
  });

  it('refuses invalid settings before reading any clock', () => {
    expect(evaluateCandidate(stale, { ...clock, thresholdMs: 59_999, readFinishedMonoMs: 0 })).toMatchObject(
      failure('InvalidStaleThreshold'),
    );
    expect(evaluateCandidate(stale, { ...clock, maxSkewMs: 60_001 })).toMatchObject(failure('InvalidMaxClockSkew'));
  });

  describe('ClockEvidenceUnusable', () => {
    it('when server time went backwards against the last snapshot', () => {
      expect(evaluateCandidate(stale, { ...clock, lastServerTimeMs: NOW + 1 })).toEqual(
        unusable('ServerTimeWentBackwards'),
      );
      expect(evaluateCandidate(stale, { ...clock, lastServerTimeMs: NOW }).ok).toBe(true);
      expect(evaluateCandidate(stale, { ...clock, lastServerTimeMs: null }).ok).toBe(true);
    });

    it('when the monotonic read window is negative or wider than the skew', () => {
      expect(evaluateCandidate(stale, { ...clock, readFinishedMonoMs: 999 })).toEqual(unusable('ReadWindowNegative'));
      expect(evaluateCandidate(stale, { ...clock, readFinishedMonoMs: 1_000 + SKEW + 1 })).toEqual(
        unusable('ReadWindowExceedsSkew'),
      );
      expect(evaluateCandidate(stale, { ...clock, readFinishedMonoMs: 1_000 + SKEW }).ok).toBe(true);
    });

    it('when server and local wall clocks differ by more than the skew, either way', () => {
      expect(evaluateCandidate(stale, { ...clock, localWallMs: NOW + SKEW + 1 })).toEqual(
        unusable('WallClockSkewExceeded'),
      );
      expect(evaluateCandidate(stale, { ...clock, localWallMs: NOW - SKEW - 1 })).toEqual(
        unusable('WallClockSkewExceeded'),
      );
      expect(evaluateCandidate(stale, { ...clock, localWallMs: NOW - SKEW }).ok).toBe(true);
    });

    it('when updated_at is after server time, even for UNKNOWN', () => {
      const future = { ...stale, status: 'UNKNOWN' as const, updatedAtMs: NOW + 1 };
      expect(evaluateCandidate(future, clock)).toEqual(unusable('UpdatedAfterServerTime'));
    });

    it('when a reading is not a number, failing closed', () => {
      expect(evaluateCandidate(stale, { ...clock, readFinishedMonoMs: Number.NaN })).toEqual(
        unusable('ReadWindowNegative'),
      );
      expect(evaluateCandidate(stale, { ...clock, localWallMs: Number.NaN })).toEqual(
        unusable('WallClockSkewExceeded'),
      );
    });

    it('checks its conditions in the order the proposer rules list them', () => {
      const everything = { ...clock, lastServerTimeMs: NOW + 1, readFinishedMonoMs: 0, localWallMs: 0 };
      const future = { ...stale, updatedAtMs: NOW + 1 };
      expect(evaluateCandidate(future, everything)).toEqual(unusable('ServerTimeWentBackwards'));
      expect(evaluateCandidate(future, { ...everything, lastServerTimeMs: null })).toEqual(
        unusable('ReadWindowNegative'),
      );
      expect(
        evaluateCandidate(future, { ...everything, lastServerTimeMs: null, readFinishedMonoMs: 1_000 + SKEW + 1 }),
      ).toEqual(unusable('ReadWindowExceedsSkew'));
      expect(evaluateCandidate(future, { ...clock, localWallMs: 0 })).toEqual(unusable('WallClockSkewExceeded'));
    });

    it('comes before the status rules', () => {
      expect(evaluateCandidate({ ...stale, status: 'COMPLETED' }, { ...clock, localWallMs: 0 })).toEqual(
        unusable('WallClockSkewExceeded'),
      );
    });
  });

  it('takes UNKNOWN as a candidate without owner or staleness checks', () => {
    const fresh = { ...stale, status: 'UNKNOWN' as const, owner: 'CURRENT_PROCESS' as const, updatedAtMs: NOW };
    const result = evaluateCandidate(fresh, clock);
    expect(result.ok && result.value.inactivityMs).toBe(0);
    expect(result.ok && result.value.digestHex).toBe((snapshotEvidenceDigestHex(fresh) as { value: string }).value);
  });

  it.each<BatchStatus>(['STOPPED', 'FAILED', 'COMPLETED', 'ABANDONED'])('refuses %s as NotRecoverable', (status) => {
    expect(evaluateCandidate({ ...stale, status, owner: 'CURRENT_PROCESS' }, clock)).toEqual(
      failure('NotRecoverable', { status }),
    );
  });

  it.each<BatchStatus>(['STARTING', 'STARTED', 'STOPPING'])('takes stale %s as a candidate', (status) => {
    expect(evaluateCandidate({ ...stale, status }, clock).ok).toBe(true);
  });

  it('refuses an execution this process owns before looking at staleness', () => {
    const fresh = { ...stale, owner: 'CURRENT_PROCESS' as const, updatedAtMs: NOW };
    expect(evaluateCandidate(fresh, clock)).toEqual(failure('OwnedByCurrentProcess'));
    expect(evaluateCandidate({ ...stale, owner: 'ABSENT' }, clock).ok).toBe(true);
  });

  it('refuses inactivity not strictly above the threshold as NotStale', () => {
    const atThreshold = { ...stale, updatedAtMs: NOW - THRESHOLD };
    expect(evaluateCandidate(atThreshold, clock)).toEqual(
      failure('NotStale', { inactivityMs: THRESHOLD, thresholdMs: THRESHOLD }),
    );
    expect(evaluateCandidate({ ...stale, updatedAtMs: NOW - THRESHOLD - 1 }, clock).ok).toBe(true);
  });
});
