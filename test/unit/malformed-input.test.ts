import { describe, expect, it } from 'vitest';
import * as checkpoint from '@/lib/domain/checkpoint';
import * as faultState from '@/lib/domain/fault-state';
import * as operatorRequest from '@/lib/domain/operator-request';
import * as recovery from '@/lib/domain/recovery';
import * as retryKey from '@/lib/domain/retry-key';
import * as settlement from '@/lib/domain/settlement';
import * as settlementRecords from '@/lib/domain/settlement-records';

/**
 * Every exported pure function of lib/domain that takes structured input, fed shapes it
 * was never meant to see: it must answer, never throw, and a Result must be an error.
 */
const MALFORMED: [string, unknown][] = [
  ['undefined', undefined],
  ['null', null],
  ['an empty object', {}],
  [
    'an object of undefined fields',
    { id: undefined, status: undefined, failure: undefined, lease: undefined, snapshots: undefined },
  ],
  ['a number', 7],
  ['NaN', Number.NaN],
  ['a negative number', -1],
  ['a too large number', 2 ** 64],
  ['a string', 'x'],
  ['an array', [1, 'a', null]],
  ['a bigint', 5n],
  ['a function', () => 1],
  [
    'wrong field types',
    {
      id: '1',
      executionId: -3,
      version: Number.NaN,
      status: 42,
      markers: 'none',
      evidenceDigest: 12,
      failure: { category: 1, id: 'x' },
    },
  ],
];

type AnyFn = (...args: unknown[]) => unknown;
const RESULT_FUNCTIONS: Record<string, AnyFn> = {
  'recovery.evidenceDigestHex': recovery.evidenceDigestHex as AnyFn,
  'recovery.snapshotEvidenceDigestHex': recovery.snapshotEvidenceDigestHex as AnyFn,
  'recovery.recoverRequestDigestHex': recovery.recoverRequestDigestHex as AnyFn,
  'recovery.orchestrationEvidenceDigestHex': recovery.orchestrationEvidenceDigestHex as AnyFn,
  'recovery.validateProposerSettings': recovery.validateProposerSettings as AnyFn,
  'recovery.evaluateCandidate': recovery.evaluateCandidate as AnyFn,
  'operatorRequest.executionRequestDigestHex': operatorRequest.executionRequestDigestHex as AnyFn,
  'retryKey.deriveRetryKey': retryKey.deriveRetryKey as AnyFn,
  'retryKey.deriveRetryKeyHex': retryKey.deriveRetryKeyHex as AnyFn,
  'faultState.newEnvelope': faultState.newEnvelope as AnyFn,
  'faultState.toCanonicalJson': faultState.toCanonicalJson as AnyFn,
  'faultState.checksum': faultState.checksum as AnyFn,
  'faultState.checksumHex': faultState.checksumHex as AnyFn,
  'faultState.canonicalJsonFromPayload': faultState.canonicalJsonFromPayload as AnyFn,
  'faultState.fromCanonicalJson': faultState.fromCanonicalJson as AnyFn,
  'faultState.validateFor': faultState.validateFor as AnyFn,
  'faultState.reserveInEnvelope': faultState.reserveInEnvelope as AnyFn,
  'faultState.clearResolvedFromEnvelope': faultState.clearResolvedFromEnvelope as AnyFn,
  'checkpoint.parseCheckpointJson': checkpoint.parseCheckpointJson as AnyFn,
  'checkpoint.validateCheckpoint': checkpoint.validateCheckpoint as AnyFn,
  'checkpoint.sealCheckpoint': checkpoint.sealCheckpoint as AnyFn,
  'checkpoint.canReplace': checkpoint.canReplace as AnyFn,
  'checkpoint.recoverCheckpoint': checkpoint.recoverCheckpoint as AnyFn,
  'checkpoint.acquireLease': checkpoint.acquireLease as AnyFn,
  'checkpoint.authorizeRetry': checkpoint.authorizeRetry as AnyFn,
  'checkpoint.evaluateWake': checkpoint.evaluateWake as AnyFn,
  'checkpoint.wakeWait': checkpoint.wakeWait as AnyFn,
  'checkpoint.compensationPlan': checkpoint.compensationPlan as AnyFn,
  'settlement.validateClaimParams': settlement.validateClaimParams as AnyFn,
  'settlement.validateRetryPolicy': settlement.validateRetryPolicy as AnyFn,
  'settlement.routeOutcome': settlement.routeOutcome as AnyFn,
  'settlementRecords.deadLetterCanonicalJson': settlementRecords.deadLetterCanonicalJson as AnyFn,
};

/** Functions that answer a plain value (a flag, a number, a name): they must answer without throwing. */
const VALUE_FUNCTIONS: Record<string, AnyFn> = {
  'checkpoint.verifyCheckpoint': checkpoint.verifyCheckpoint as AnyFn,
  'checkpoint.isTakeoverCandidate': checkpoint.isTakeoverCandidate as AnyFn,
  'checkpoint.differingSnapshotFields': checkpoint.differingSnapshotFields as AnyFn,
  'settlement.backoffMs': settlement.backoffMs as AnyFn,
  'settlementRecords.failureReasonOf': settlementRecords.failureReasonOf as AnyFn,
  'operatorRequest.stopDisposition': operatorRequest.stopDisposition as AnyFn,
  'operatorRequest.abandonDisposition': operatorRequest.abandonDisposition as AnyFn,
};

const cases = Object.entries(RESULT_FUNCTIONS).flatMap(([name, fn]) =>
  MALFORMED.map(([shape, value]) => [name, shape, fn, value] as const),
);
const valueCases = Object.entries(VALUE_FUNCTIONS).flatMap(([name, fn]) =>
  MALFORMED.map(([shape, value]) => [name, shape, fn, value] as const),
);

describe('malformed input to the pure domain functions', () => {
  it.each(cases)('%s given %s returns a typed error', (_name, _shape, fn, value) => {
    for (const args of [[value], [value, value, value, value], [value, undefined, undefined, undefined]]) {
      let result: unknown;
      expect(() => {
        result = fn(...args);
      }).not.toThrow();
      expect(result).toMatchObject({ ok: false });
      expect(typeof (result as { error: { kind?: unknown } }).error.kind).toBe('string');
    }
  });

  it.each(valueCases)('%s given %s answers without throwing', (_name, _shape, fn, value) => {
    for (const args of [[value], [value, value, value, value], [value, undefined, undefined, undefined]]) {
      expect(() => fn(...args)).not.toThrow();
    }
  });

  it('answers the issue case: recoverRequestDigestHex with an unexpected failure shape', () => {
    const input = {
      executionId: 7,
      observedVersion: 3,
      reasonCode: 'OPERATOR_CONFIRMED',
      evidenceDigest: 'ab'.repeat(32),
      unknownCommit: false,
      resultingStatus: 'FAILED',
      failure: { category: 'STALE_RECOVERED' },
    };
    expect(recovery.recoverRequestDigestHex(input as never)).toEqual({
      ok: false,
      error: { kind: 'InvalidRequest', field: 'failure.id' },
    });
    expect(
      recovery.recoverRequestDigestHex({ ...input, failure: { category: 'STALE_RECOVERED', id: -1 } } as never),
    ).toMatchObject({ ok: false });
    expect(recovery.recoverRequestDigestHex({ ...input, observedVersion: Number.NaN } as never)).toMatchObject({
      ok: false,
      error: { field: 'observedVersion' },
    });
  });
});
