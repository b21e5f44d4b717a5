import { describe, expect, it } from 'vitest';
import type { CheckpointSaveError } from '@/lib/ports/checkpoint-store';
import type { ProposerError } from '@/lib/domain/recovery';
import { ERROR_CODES, errorCodeOf, isErrorCode } from '@/lib/domain/error-code';
import { err, mapOk, ok } from '@/lib/domain/result';
import { actionResult, serviceError, type ServiceError } from '@/lib/domain/service-result';

// The kernel's pure half (lib/domain/error-code.ts, service-result.ts, result.ts); its units of work, and
// the SQLSTATE of real database errors, are tested on PostgreSQL in test/integration/service-kernel.test.ts.

describe('the error code list', () => {
  it('holds each code once, each SCREAMING_SNAKE', () => {
    expect(new Set(ERROR_CODES).size).toBe(ERROR_CODES.length);
    for (const code of ERROR_CODES) expect(code).toMatch(/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/);
  });

  it('has the code of every domain error a service answers as it is', () => {
    const proposer = {
      InvalidStaleThreshold: true,
      InvalidMaxClockSkew: true,
      ClockEvidenceUnusable: true,
      NotRecoverable: true,
      OwnedByCurrentProcess: true,
      NotStale: true,
      InvalidEvidence: true,
    } satisfies Record<ProposerError['kind'], true>;
    const checkpointSave = { InvalidCheckpoint: true, StaleLease: true } satisfies Record<
      CheckpointSaveError['kind'],
      true
    >;
    for (const kind of [...Object.keys(proposer), ...Object.keys(checkpointSave)]) {
      expect(isErrorCode(errorCodeOf(kind)), kind).toBe(true);
    }
    expect(errorCodeOf('NotStale')).toBe('NOT_STALE');
    expect(errorCodeOf('StaleLease')).toBe('STALE_LEASE');
  });

  it('throws for a kind without a listed code, and tells listed codes from other text', () => {
    expect(() => errorCodeOf('SomethingNew')).toThrow(/SomethingNew has no code/);
    expect(isErrorCode('FOUR_EYES_REQUIRED')).toBe(true);
    expect(isErrorCode('four_eyes_required')).toBe(false);
    expect(isErrorCode(42)).toBe(false);
  });
});

describe('a service result as an action answers it', () => {
  it('passes the value through, and the error as its own fields beside ok: false', () => {
    expect(actionResult(ok({ id: 7 }))).toEqual({ ok: true, value: { id: 7 } });
    expect(actionResult(err(serviceError('CONFLICT', 'Reload it.')))).toEqual({
      ok: false,
      code: 'CONFLICT',
      message: 'Reload it.',
    });
  });

  it('carries the fields at fault only when there are some, and nothing else of the error', () => {
    const invalid: ServiceError = { code: 'INVALID_INPUT', message: 'Some fields are not valid.', fieldErrors: {} };
    expect(actionResult(err({ ...invalid, fieldErrors: { note: ['Required.'] } }))).toEqual({
      ok: false,
      code: 'INVALID_INPUT',
      message: 'Some fields are not valid.',
      fieldErrors: { note: ['Required.'] },
    });
    const withExtra = { code: 'NOT_FOUND', message: 'No job.', ownerToken: 'secret' } as ServiceError;
    expect(Object.keys(actionResult(err(withExtra)))).toEqual(['ok', 'code', 'message']);
  });

  it('maps a value and leaves an error as it is', () => {
    expect(mapOk(ok(2), (n) => n * 10)).toEqual({ ok: true, value: 20 });
    const failure = err(serviceError('FORBIDDEN', 'No.'));
    expect(mapOk(failure, () => 'never')).toBe(failure);
  });
});
