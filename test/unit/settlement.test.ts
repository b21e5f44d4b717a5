import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import vectors from '../fixtures/vectors.json' with { type: 'json' };
import {
  BULK_REPLAY_ITEM_RESULTS,
  BULK_REPLAY_PREVIEW_CAP,
  DEAD_LETTER_SCHEMA,
  DEFAULT_RETRY_POLICY,
  FAILURE_CODES,
  MAX_SETTLEMENT_CLAIM_BATCH,
  MAX_SETTLEMENT_LEASE_MS,
  MAX_SETTLEMENT_WORKER_ID_BYTES,
  MAX_U32,
  RETRYABLE_FAILURE_CODES,
  SETTLEMENT_EVENT_KINDS,
  SETTLEMENT_ROUTE_ERROR_CLASSES,
  SKIP_REASONS,
  backendError,
  backoffMs,
  bulkReplayItemOperationId,
  classifyBulkReplayItem,
  conflictError,
  deadLetterCanonicalJson,
  failureDetailSha256Hex,
  failureReasonOf,
  invalidRecord,
  isFailureCode,
  isSkipReason,
  routeOutcome,
  settlementEventKindForRoute,
  validateClaimParams,
  validateRetryPolicy,
  type DeadLetterInput,
  type FailureCode,
  type RetryPolicy,
  type SettlementOutcome,
  type SettlementRoute,
} from '@/lib/domain/settlement';

const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

const policy = (overrides: Partial<RetryPolicy> = {}): RetryPolicy => ({ ...DEFAULT_RETRY_POLICY, ...overrides });

function route(attempts: number, outcome: SettlementOutcome, retryPolicy: RetryPolicy, observedAtMs: number) {
  const result = routeOutcome(attempts, outcome, retryPolicy, observedAtMs);
  if (!result.ok) throw new Error(`routing must succeed: ${result.error.detail}`);
  return result.value;
}

/** Narrows a vector's loosely typed outcome into the domain union, failing on unknown words. */
function vectorOutcome(raw: { kind: string; code?: string; reason?: string }): SettlementOutcome {
  if (raw.kind === 'Accepted') return { kind: 'Accepted' };
  if (raw.kind === 'Skipped' && raw.reason !== undefined && isSkipReason(raw.reason)) {
    return { kind: 'Skipped', reason: raw.reason };
  }
  if ((raw.kind === 'Retryable' || raw.kind === 'Permanent') && raw.code !== undefined && isFailureCode(raw.code)) {
    return { kind: raw.kind, code: raw.code };
  }
  throw new Error(`unknown vector outcome ${JSON.stringify(raw)}`);
}

describe('shared vectors', () => {
  it('use the default retry policy', () => {
    expect(vectors.settlementBackoff.policy).toEqual(DEFAULT_RETRY_POLICY);
    expect(vectors.settlementRouting.policy).toEqual(DEFAULT_RETRY_POLICY);
  });

  it.each(vectors.settlementBackoff.table)('backoff after $attempts attempts is $backoffMs ms', (row) => {
    expect(backoffMs(vectors.settlementBackoff.policy, row.attempts)).toBe(row.backoffMs);
  });

  it.each(vectors.settlementRouting.cases)('routes $outcome.kind after $attempts attempts', (vector) => {
    const expected = vector.route as SettlementRoute;
    const { policy: vectorPolicy } = vectors.settlementRouting;
    const actual = routeOutcome(vector.attempts, vectorOutcome(vector.outcome), vectorPolicy, vector.observedAtMs);
    expect(actual).toEqual({ ok: true, value: expected });
  });

  it.each(vectors.settlementClaimValidation.cases)('claim validation case %#', (vector) => {
    const { workerId, leaseMs, limit, result } = vector;
    const expected =
      result === 'ok' ? { ok: true, value: { workerId, leaseMs, limit } } : { ok: false, error: { kind: result } };
    expect(validateClaimParams({ workerId, leaseMs, limit })).toEqual(expected);
  });
});

describe('validateClaimParams', () => {
  const valid = { workerId: 'worker', leaseMs: 1, limit: 1 };
  const kind = (params: typeof valid) => {
    const result = validateClaimParams(params);
    return result.ok ? 'ok' : result.error.kind;
  };

  it('bounds the worker id in UTF-8 bytes, not characters (seed)', () => {
    expect(MAX_SETTLEMENT_WORKER_ID_BYTES).toBe(128);
    expect(kind({ ...valid, workerId: 'w'.repeat(128) })).toBe('ok');
    expect(kind({ ...valid, workerId: '\u00e9'.repeat(64) })).toBe('ok');
    expect(kind({ ...valid, workerId: '\u00e9'.repeat(65) })).toBe('WorkerIdLength');
    expect(kind({ ...valid, workerId: '\u{1F600}'.repeat(32) })).toBe('ok');
    expect(kind({ ...valid, workerId: '\u{1F600}'.repeat(33) })).toBe('WorkerIdLength');
    expect(kind({ ...valid, workerId: '' })).toBe('WorkerIdLength');
  });

  it('bounds the lease and the batch to whole numbers in range (seed)', () => {
    expect(kind({ ...valid, leaseMs: MAX_SETTLEMENT_LEASE_MS, limit: MAX_SETTLEMENT_CLAIM_BATCH })).toBe('ok');
    expect(kind({ ...valid, leaseMs: MAX_SETTLEMENT_LEASE_MS + 1 })).toBe('LeaseDuration');
    expect(kind({ ...valid, leaseMs: 1.5 })).toBe('LeaseDuration');
    expect(kind({ ...valid, leaseMs: Number.NaN })).toBe('LeaseDuration');
    expect(kind({ ...valid, limit: MAX_SETTLEMENT_CLAIM_BATCH + 1 })).toBe('ClaimBatch');
    expect(kind({ ...valid, limit: 2.5 })).toBe('ClaimBatch');
  });

  it('reports the worker id first, then the lease, then the batch', () => {
    expect(kind({ workerId: '', leaseMs: 0, limit: 0 })).toBe('WorkerIdLength');
    expect(kind({ workerId: 'w', leaseMs: 0, limit: 0 })).toBe('LeaseDuration');
  });
});

describe('vocabularies', () => {
  it('hold the skip reasons, failure codes and retryable codes the settlement runtime persists', () => {
    expect(SKIP_REASONS).toEqual(['denied', 'no_economic_intent', 'zero_charge']);
    expect(FAILURE_CODES).toEqual([
      'invalid_receipt_signature',
      'invalid_action_hash',
      'untrusted_receipt_signer',
      'malformed_financial_metadata',
      'invalid_observation',
      'rpc',
      'invalid_input',
      'invalid_dispatch',
      'invalid_binding',
      'unsupported',
      'serialization',
      'signature',
      'verification',
      'backend',
    ]);
    expect(RETRYABLE_FAILURE_CODES).toEqual(['rpc', 'backend']);
    expect(isFailureCode('RPC')).toBe(false);
    expect(isSkipReason('skipped')).toBe(false);
  });

  it('bound the error classes to Backend, Conflict and InvalidRecord (seed)', () => {
    expect(SETTLEMENT_ROUTE_ERROR_CLASSES).toEqual(['Backend', 'Conflict', 'InvalidRecord']);
    expect(backendError('db unavailable')).toEqual({ kind: 'Backend', detail: 'db unavailable' });
    expect(conflictError('stale lease')).toEqual({ kind: 'Conflict', detail: 'stale lease' });
    expect(invalidRecord('negative counter')).toEqual({ kind: 'InvalidRecord', detail: 'negative counter' });
  });

  it('name the settlement event kinds and bulk replay results', () => {
    expect(SETTLEMENT_EVENT_KINDS).toEqual(['claimed', 'retry_scheduled', 'dead_lettered', 'replayed', 'finished']);
    expect(BULK_REPLAY_ITEM_RESULTS).toEqual([
      'replayed',
      'discarded',
      'requeued',
      'already_replayed',
      'no_longer_dead_lettered',
      'no_longer_retry_scheduled',
      'changed_since_preview',
    ]);
    expect(BULK_REPLAY_PREVIEW_CAP).toBe(100_000);
  });
});

describe('validateRetryPolicy', () => {
  it('defaults to the documented bounds (seed)', () => {
    expect(DEFAULT_RETRY_POLICY).toEqual({
      maxRetries: 5,
      initialBackoffMs: 250,
      backoffMultiplier: 2,
      backoffCapMs: 60_000,
    });
    expect(validateRetryPolicy(policy()).ok).toBe(true);
  });

  it.each<Partial<RetryPolicy>>([
    { maxRetries: 0 },
    { maxRetries: 32 },
    { initialBackoffMs: 1 },
    { initialBackoffMs: 1, backoffCapMs: 1 },
    { backoffCapMs: 86_400_000 },
    { backoffMultiplier: 1 },
    { backoffMultiplier: 16 },
  ])('accepts the boundary %o (seed)', (overrides) => {
    expect(validateRetryPolicy(policy(overrides))).toEqual({ ok: true, value: policy(overrides) });
  });

  it.each<[Partial<RetryPolicy>, RegExp]>([
    [{ maxRetries: 33 }, /max_retries/],
    [{ maxRetries: -1 }, /max_retries/],
    [{ initialBackoffMs: 0 }, /initial_backoff_ms must be nonzero/],
    [{ initialBackoffMs: -250 }, /initial_backoff_ms must be a positive integer/],
    [{ backoffCapMs: 0 }, /backoff_cap_ms must be nonzero/],
    [{ initialBackoffMs: 60_001 }, /initial_backoff_ms 60001 exceeds backoff_cap_ms 60000/],
    [{ backoffCapMs: 86_400_001 }, /backoff_cap_ms must be an integer at most 86400000/],
    [{ backoffMultiplier: 0 }, /backoff_multiplier/],
    [{ backoffMultiplier: 17 }, /backoff_multiplier/],
    [{ backoffMultiplier: 1.5 }, /backoff_multiplier/],
  ])('refuses %o as InvalidRecord (seed)', (overrides, detail) => {
    const result = validateRetryPolicy(policy(overrides));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.kind).toBe('InvalidRecord');
    expect(result.error.detail).toMatch(detail);
  });
});

describe('backoffMs', () => {
  it('grows exponentially until the cap (seed)', () => {
    const p = policy({ maxRetries: 8, initialBackoffMs: 100, backoffMultiplier: 2, backoffCapMs: 1000 });
    expect([0, 1, 2, 3, 4, 50].map((attempts) => backoffMs(p, attempts))).toEqual([100, 200, 400, 800, 1000, 1000]);
  });

  it('stays constant with a unit multiplier for any attempt count (seed)', () => {
    expect(backoffMs(policy({ backoffMultiplier: 1 }), MAX_U32)).toBe(250);
  });

  it('saturates at the cap for the largest multiplier and huge attempt counts', () => {
    const p = policy({ initialBackoffMs: 3, backoffMultiplier: 16, backoffCapMs: 86_400_000 });
    expect(backoffMs(p, 6)).toBe(50_331_648);
    expect(backoffMs(p, 7)).toBe(86_400_000);
    expect(backoffMs(p, 1e12)).toBe(86_400_000);
  });

  it('treats a zero multiplier as one, as the runtime does', () => {
    expect(backoffMs(policy({ backoffMultiplier: 0 }), 7)).toBe(250);
  });
});

describe('routeOutcome', () => {
  const rpc: SettlementOutcome = { kind: 'Retryable', code: 'rpc', detailSha256: failureDetailSha256Hex('rpc lag') };

  it('consumes the retry envelope, then dead-letters (seed)', () => {
    const p = policy({ maxRetries: 2, initialBackoffMs: 10, backoffMultiplier: 2, backoffCapMs: 100 });
    expect(route(0, rpc, p, 1_000)).toEqual({ kind: 'RetryScheduled', attempt: 1, nextVisibleAtMs: 1_010 });
    expect(route(1, rpc, p, 1_000)).toEqual({ kind: 'RetryScheduled', attempt: 2, nextVisibleAtMs: 1_020 });
    expect(route(2, rpc, p, 1_000)).toEqual({ kind: 'DeadLettered', attempts: 3 });
  });

  it('dead-letters the first retryable failure when no retries are allowed (seed)', () => {
    expect(route(0, rpc, policy({ maxRetries: 0 }), 5)).toEqual({ kind: 'DeadLettered', attempts: 1 });
  });

  it('short-circuits permanent failures and passes accepted and skipped outcomes through (seed)', () => {
    expect(route(0, { kind: 'Permanent', code: 'rpc' }, policy(), 0)).toEqual({ kind: 'DeadLettered', attempts: 1 });
    expect(route(4, { kind: 'Accepted' }, policy(), 0)).toEqual({ kind: 'NoAction' });
    for (const reason of SKIP_REASONS) {
      expect(route(0, { kind: 'Skipped', reason }, policy(), 0)).toEqual({ kind: 'NoAction' });
    }
  });

  it.each(FAILURE_CODES)('retries a retryable %s only when its code allows replay (seed)', (code: FailureCode) => {
    const routed = route(0, { kind: 'Retryable', code }, policy(), 100);
    const expected: SettlementRoute =
      code === 'rpc' || code === 'backend'
        ? { kind: 'RetryScheduled', attempt: 1, nextVisibleAtMs: 350 }
        : { kind: 'DeadLettered', attempts: 1 };
    expect(routed).toEqual(expected);
  });

  it.each<[string, number, SettlementOutcome, RetryPolicy, number, RegExp]>([
    ['an invalid policy', 0, rpc, policy({ backoffCapMs: 0 }), 0, /backoff_cap_ms/],
    ['negative attempts', -1, rpc, policy(), 0, /attempts/],
    ['fractional attempts', 1.5, rpc, policy(), 0, /attempts/],
    ['attempts beyond u32', MAX_U32 + 1, rpc, policy(), 0, /attempts/],
    ['an unsafe observation time', 0, rpc, policy(), 2 ** 53, /observed_at_ms/],
    ['a visibility deadline past 2^53', 0, rpc, policy(), Number.MAX_SAFE_INTEGER - 10, /visibility deadline/],
    ['an attempt count that would overflow u32', MAX_U32, { kind: 'Permanent', code: 'rpc' }, policy(), 0, /overflows/],
    ['an unknown failure code', 0, { kind: 'Permanent', code: 'oops' as FailureCode }, policy(), 0, /failure code/],
    ['an unknown skip reason', 0, { kind: 'Skipped', reason: 'free' as 'denied' }, policy(), 0, /skip reason/],
    ['a short detail digest', 0, { kind: 'Retryable', code: 'rpc', detailSha256: 'abc' }, policy(), 0, /detail_sha/],
  ])('refuses %s as InvalidRecord', (_name, attempts, outcome, p, observedAtMs, detail) => {
    const result = routeOutcome(attempts, outcome, p, observedAtMs);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.kind).toBe('InvalidRecord');
    expect(result.error.detail).toMatch(detail);
  });

  it('dead-letters at the largest attempt count that still fits', () => {
    expect(route(MAX_U32 - 1, { kind: 'Permanent', code: 'rpc' }, policy(), 0)).toEqual({
      kind: 'DeadLettered',
      attempts: MAX_U32,
    });
  });
});

describe('failure reasons', () => {
  it('hash the detail with SHA-256, as the runtime does', () => {
    expect(failureDetailSha256Hex('')).toBe(EMPTY_SHA256);
    expect(failureDetailSha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('keep a given digest and treat a missing one as the empty detail', () => {
    const digest = failureDetailSha256Hex('timeout');
    expect(failureReasonOf({ kind: 'Retryable', code: 'rpc', detailSha256: digest })).toEqual({
      code: 'rpc',
      detailSha256Hex: digest,
    });
    expect(failureReasonOf({ kind: 'Permanent', code: 'signature' })).toEqual({
      code: 'signature',
      detailSha256Hex: EMPTY_SHA256,
    });
    expect(failureReasonOf({ kind: 'Accepted' })).toBeNull();
    expect(failureReasonOf({ kind: 'Skipped', reason: 'denied' })).toBeNull();
  });
});

describe('deadLetterCanonicalJson', () => {
  const input: DeadLetterInput = {
    receiptId: 'rcpt-1',
    finalizedAt: 100,
    attempts: 3,
    reasonCode: 'rpc',
    detailSha256Hex: failureDetailSha256Hex('connection refused'),
  };
  const DIGEST_BYTES =
    '37,168,67,130,20,11,17,172,111,158,2,247,103,200,175,117,20,63,39,57,184,252,183,19,14,92,119,32,107,43,213,62';

  it('writes the RFC 8785 v2 record with the digest as the runtime bytes', () => {
    expect(deadLetterCanonicalJson(input)).toEqual({
      ok: true,
      value:
        '{"attempts":3,"finalized_at":100,' +
        `"reason":{"code":"rpc","detail_sha256":[${DIGEST_BYTES}]},` +
        `"receipt_id":"rcpt-1","schema":"${DEAD_LETTER_SCHEMA}"}`,
    });
    expect(DEAD_LETTER_SCHEMA).toBe('chio.settle.dead-letter.v2');
  });

  it('equals canonicalize of the record for any valid input', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, unit: 'grapheme' }),
        fc.nat({ max: Number.MAX_SAFE_INTEGER }),
        fc.integer({ min: 1, max: MAX_U32 }),
        fc.constantFrom(...FAILURE_CODES),
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        (receiptId, finalizedAt, attempts, reasonCode, digest) => {
          const detailSha256Hex = Buffer.from(digest).toString('hex');
          const record = {
            schema: DEAD_LETTER_SCHEMA,
            receipt_id: receiptId,
            finalized_at: finalizedAt,
            attempts,
            reason: { code: reasonCode, detail_sha256: [...digest] },
          };
          expect(deadLetterCanonicalJson({ receiptId, finalizedAt, attempts, reasonCode, detailSha256Hex })).toEqual({
            ok: true,
            value: canonicalize(record),
          });
        },
      ),
    );
  });

  it('carries only the bounded reason, never the detail (seed)', () => {
    const result = deadLetterCanonicalJson(input);
    expect(result.ok && result.value.includes('connection refused')).toBe(false);
    expect(result.ok && result.value.includes('pipeline_error')).toBe(false);
  });

  it('is the same for upper- and lower-case hex, so an equal outcome compares byte for byte', () => {
    const upper = deadLetterCanonicalJson({ ...input, detailSha256Hex: input.detailSha256Hex.toUpperCase() });
    expect(upper).toEqual(deadLetterCanonicalJson(input));
  });

  it.each<[string, Partial<DeadLetterInput>, RegExp]>([
    ['an empty receipt id', { receiptId: '' }, /receipt_id/],
    ['a receipt id with a lone surrogate', { receiptId: 'r\udc00' }, /receipt_id/],
    ['zero attempts', { attempts: 0 }, /attempts/],
    ['fractional attempts', { attempts: 1.5 }, /attempts/],
    ['attempts beyond u32', { attempts: MAX_U32 + 1 }, /attempts/],
    ['a negative finalized_at', { finalizedAt: -1 }, /finalized_at/],
    ['a finalized_at of 2^53', { finalizedAt: 2 ** 53 }, /finalized_at/],
    ['an unknown code', { reasonCode: 'timeout' as FailureCode }, /failure code/],
    ['a short digest', { detailSha256Hex: 'ab'.repeat(31) }, /detail_sha256/],
    ['a non-hex digest', { detailSha256Hex: 'zz'.repeat(32) }, /detail_sha256/],
  ])('refuses %s as InvalidRecord', (_name, overrides, detail) => {
    const result = deadLetterCanonicalJson({ ...input, ...overrides });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toEqual({ kind: 'InvalidRecord', detail: expect.stringMatching(detail) });
  });
});

describe('settlement history and bulk replay', () => {
  it('maps each committed route to its history event', () => {
    expect(settlementEventKindForRoute({ kind: 'NoAction' })).toBe('finished');
    const retry: SettlementRoute = { kind: 'RetryScheduled', attempt: 1, nextVisibleAtMs: 5 };
    expect(settlementEventKindForRoute(retry)).toBe('retry_scheduled');
    expect(settlementEventKindForRoute({ kind: 'DeadLettered', attempts: 2 })).toBe('dead_lettered');
  });

  it('derives each item operation id from the job and the receipt', () => {
    expect(bulkReplayItemOperationId('job-7', 'rcpt-42')).toBe('job-7:rcpt-42');
  });

  it('classifies a frozen item: already replayed, then gone, then recorded again, else replayed', () => {
    const frozen = { alreadyReplayed: false, deadLetter: { recordedAtMs: 500 }, previewRecordedAtMs: 500 };
    expect(classifyBulkReplayItem(frozen)).toBe('replayed');
    expect(classifyBulkReplayItem({ ...frozen, deadLetter: { recordedAtMs: 900 } })).toBe('changed_since_preview');
    expect(classifyBulkReplayItem({ ...frozen, deadLetter: null })).toBe('no_longer_dead_lettered');
    expect(classifyBulkReplayItem({ ...frozen, alreadyReplayed: true, deadLetter: null })).toBe('already_replayed');
  });
});
