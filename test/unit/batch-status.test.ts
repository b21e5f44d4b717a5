import { describe, expect, it } from 'vitest';
import {
  BATCH_STATUSES,
  canRestartFrom,
  canTransition,
  FAILURE_CATEGORIES,
  failureCategorySnakeCase,
  FAULT_PHASES,
  isActive,
  isBatchStatus,
  isFailureCategory,
  isFaultPhase,
  isFinished,
  isOwnerObservation,
  isRecoveryResultStatus,
  isTerminal,
  isUnresolved,
  OWNER_OBSERVATIONS,
  RECOVERY_PRIOR_STATUSES,
  type BatchStatus,
} from '@/lib/domain/batch-status';
import {
  isActorRef,
  isOperationId,
  isReasonCode,
  validateActorRef,
  validateOperationId,
  validateReasonCode,
} from '@/lib/domain/identifier-patterns';

describe('BatchStatus vocabulary', () => {
  it('holds exactly the eight runtime statuses', () => {
    expect([...BATCH_STATUSES].sort()).toEqual([
      'ABANDONED',
      'COMPLETED',
      'FAILED',
      'STARTED',
      'STARTING',
      'STOPPED',
      'STOPPING',
      'UNKNOWN',
    ]);
    expect(isBatchStatus('STARTED')).toBe(true);
    expect(isBatchStatus('started')).toBe(false);
    expect(isBatchStatus(1)).toBe(false);
  });

  // status: active, finished, terminal, unresolved
  const table: [BatchStatus, boolean, boolean, boolean, boolean][] = [
    ['STARTING', true, false, false, true],
    ['STARTED', true, false, false, true],
    ['STOPPING', true, false, false, true],
    ['STOPPED', false, true, false, false],
    ['FAILED', false, true, false, false],
    ['COMPLETED', false, true, true, false],
    ['ABANDONED', false, true, true, false],
    ['UNKNOWN', false, false, false, true],
  ];
  it.each(table)('classifies %s', (status, active, finished, terminal, unresolved) => {
    expect(isActive(status)).toBe(active);
    expect(isFinished(status)).toBe(finished);
    expect(isTerminal(status)).toBe(terminal);
    expect(isUnresolved(status)).toBe(unresolved);
  });

  it('allows exactly the in-place moves the runtime allows', () => {
    const legal = new Set([
      'STARTING>STARTED',
      'STARTING>STOPPING',
      'STARTING>FAILED',
      'STARTING>UNKNOWN',
      'STARTED>STOPPING',
      'STARTED>STOPPED',
      'STARTED>FAILED',
      'STARTED>COMPLETED',
      'STARTED>UNKNOWN',
      'STOPPING>STOPPED',
      'STOPPING>FAILED',
      'STOPPING>UNKNOWN',
      'STOPPED>ABANDONED',
      'FAILED>ABANDONED',
      'UNKNOWN>ABANDONED',
      'UNKNOWN>FAILED',
    ]);
    for (const from of BATCH_STATUSES) {
      for (const to of BATCH_STATUSES) {
        expect(canTransition(from, to), `${from} -> ${to}`).toBe(legal.has(`${from}>${to}`));
      }
    }
  });

  it('restarts only from STOPPED or FAILED', () => {
    expect(BATCH_STATUSES.filter(canRestartFrom)).toEqual(['STOPPED', 'FAILED']);
  });

  it('lets recovery leave only unresolved statuses, for FAILED or ABANDONED', () => {
    expect([...RECOVERY_PRIOR_STATUSES]).toEqual(['STARTING', 'STARTED', 'STOPPING', 'UNKNOWN']);
    expect(BATCH_STATUSES.filter(isRecoveryResultStatus)).toEqual(['FAILED', 'ABANDONED']);
  });
});

describe('failure categories', () => {
  it('holds the fifteen durable codes', () => {
    expect(FAILURE_CATEGORIES).toHaveLength(15);
    expect(new Set(FAILURE_CATEGORIES).size).toBe(15);
    expect(isFailureCategory('STALE_RECOVERED')).toBe(true);
    expect(isFailureCategory('UNKNOWN_COMMIT')).toBe(true);
    expect(isFailureCategory('stale_recovered')).toBe(false);
    expect(isFailureCategory('NOPE')).toBe(false);
  });

  it('gives each its lowercase snake-case form', () => {
    expect(failureCategorySnakeCase('STALE_RECOVERED')).toBe('stale_recovered');
    expect(failureCategorySnakeCase('TRANSIENT_INFRASTRUCTURE')).toBe('transient_infrastructure');
    for (const category of FAILURE_CATEGORIES) {
      expect(failureCategorySnakeCase(category)).toMatch(/^[a-z]+(_[a-z]+)*$/);
    }
  });
});

describe('fault phases and owner observations', () => {
  it('names the seven fault phases in lowercase', () => {
    expect(FAULT_PHASES).toEqual(['read', 'process', 'write', 'transaction', 'checkpoint', 'listener', 'backoff']);
    expect(isFaultPhase('write')).toBe(true);
    expect(isFaultPhase('WRITE')).toBe(false);
  });

  it('uses the seed codes as owner observation values', () => {
    expect(OWNER_OBSERVATIONS).toEqual(['ABSENT', 'CURRENT_PROCESS', 'OTHER_PROCESS']);
    expect(isOwnerObservation('OTHER_PROCESS')).toBe(true);
    expect(isOwnerObservation('OtherProcess')).toBe(false);
  });
});

describe('identifier validators', () => {
  it.each([
    ['UNKNOWN_EFFECT', true],
    ['A', true],
    ['A'.repeat(64), true],
    ['A'.repeat(65), false],
    ['', false],
    ['lower', false],
    ['WITH SPACE', false],
    ['WITH-DASH', false],
    ['TRAILING\n', false],
  ])('reason code %j -> %s', (value, valid) => {
    expect(isReasonCode(value)).toBe(valid);
    expect(validateReasonCode(value).ok).toBe(valid);
  });

  it.each([
    ['keel:proposal:12', true],
    ['alice@example.com', true],
    ['a.b_c-d', true],
    ['x'.repeat(128), true],
    ['x'.repeat(129), false],
    ['', false],
    ['has space', false],
    ['slash/no', false],
  ])('actor ref %j -> %s', (value, valid) => {
    expect(isActorRef(value)).toBe(valid);
    expect(validateActorRef(value).ok).toBe(valid);
  });

  it.each([
    ['keel-proposal-12', true],
    ['job:receipt.1_x', true],
    ['o'.repeat(64), true],
    ['o'.repeat(65), false],
    ['', false],
    ['user@host', false],
  ])('operation id %j -> %s', (value, valid) => {
    expect(isOperationId(value)).toBe(valid);
    expect(validateOperationId(value).ok).toBe(valid);
  });

  it('returns typed errors naming what was invalid', () => {
    expect(validateReasonCode('bad')).toEqual({ ok: false, error: { kind: 'InvalidReasonCode' } });
    expect(validateActorRef('')).toEqual({ ok: false, error: { kind: 'InvalidActorRef' } });
    expect(validateOperationId(42)).toEqual({ ok: false, error: { kind: 'InvalidOperationId' } });
    expect(validateReasonCode('OK')).toEqual({ ok: true, value: 'OK' });
  });
});
