import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  deriveRetryKey,
  deriveRetryKeyHex,
  digestBytes,
  isDigestHex,
  retryKeyShortHex,
  type RetryKeyInput,
} from '@/lib/domain/retry-key';
import vectors from '../fixtures/vectors.json' with { type: 'json' };

const base: RetryKeyInput = {
  definitionDigest: '11'.repeat(32),
  stepName: 'step-a',
  phase: 'write',
  checkpointDigest: '22'.repeat(32),
  ordinal: 5,
};

const keyHex = (input: RetryKeyInput): string => {
  const result = deriveRetryKeyHex(input);
  if (!result.ok) throw new Error(`unexpected ${result.error.kind}`);
  return result.value;
};

describe('deriveRetryKey', () => {
  it.each(vectors.retryKey)('matches the shared vector for $input.stepName', ({ input, digest }) => {
    expect(keyHex(input as RetryKeyInput)).toBe(digest);
  });

  it('returns 32 bytes equal to the hex form', () => {
    const bytes = deriveRetryKey(base);
    expect(bytes.ok && bytes.value.byteLength).toBe(32);
    expect(bytes.ok && bytes.value.toString('hex')).toBe(keyHex(base));
  });

  it('accepts digests as bytes as well as hex', () => {
    const fromBytes = keyHex({
      ...base,
      definitionDigest: Buffer.alloc(32, 0x11),
      checkpointDigest: Uint8Array.from(Buffer.alloc(32, 0x22)),
    });
    expect(fromBytes).toBe(keyHex(base));
  });

  it('accepts the item ordinal as bigint over the whole u64 range', () => {
    expect(keyHex({ ...base, ordinal: 5n })).toBe(keyHex(base));
    expect(keyHex({ ...base, ordinal: (1n << 64n) - 1n })).toMatch(/^[0-9a-f]{64}$/);
  });

  it.each<[string, Partial<RetryKeyInput>]>([
    ['definition digest', { definitionDigest: '12'.repeat(32) }],
    ['step name', { stepName: 'step-b' }],
    ['phase', { phase: 'read' }],
    ['checkpoint digest', { checkpointDigest: '23'.repeat(32) }],
    ['item ordinal', { ordinal: 6 }],
  ])('changes with the %s', (_field, change) => {
    expect(keyHex({ ...base, ...change })).not.toBe(keyHex(base));
  });

  it('prefixes the step name with its UTF-8 byte length and ends the phase with 0x00', () => {
    const length = Buffer.alloc(8);
    length.writeBigUInt64BE(2n);
    const ordinal = Buffer.alloc(8);
    ordinal.writeBigUInt64BE(5n);
    const expected = createHash('sha256')
      .update('oxide-batch/retry-key/1')
      .update(Buffer.alloc(32, 0x11))
      .update(length)
      .update(Buffer.from('é', 'utf8'))
      .update('write')
      .update(Buffer.from([0]))
      .update(Buffer.alloc(32, 0x22))
      .update(ordinal)
      .digest('hex');
    expect(keyHex({ ...base, stepName: 'é' })).toBe(expected);
  });

  it.each<[string, Partial<RetryKeyInput>, 'definitionDigest' | 'checkpointDigest']>([
    ['short hex', { definitionDigest: '11'.repeat(31) }, 'definitionDigest'],
    ['uppercase hex', { definitionDigest: 'AB'.repeat(32) }, 'definitionDigest'],
    ['non-hex text', { checkpointDigest: 'zz'.repeat(32) }, 'checkpointDigest'],
    ['31 bytes', { checkpointDigest: new Uint8Array(31) }, 'checkpointDigest'],
  ])('refuses a digest given as %s', (_case, change, field) => {
    expect(deriveRetryKey({ ...base, ...change })).toEqual({ ok: false, error: { kind: 'InvalidDigest', field } });
  });

  it.each([-1, 1.5, Number.MAX_SAFE_INTEGER + 1, Number.NaN, -1n, 1n << 64n])('refuses item ordinal %s', (ordinal) => {
    expect(deriveRetryKey({ ...base, ordinal })).toEqual({ ok: false, error: { kind: 'InvalidOrdinal' } });
  });

  it('refuses an empty or ill-formed step name and an unknown phase', () => {
    expect(deriveRetryKey({ ...base, stepName: '' })).toEqual({ ok: false, error: { kind: 'InvalidStepName' } });
    expect(deriveRetryKey({ ...base, stepName: 'a\ud800' })).toEqual({ ok: false, error: { kind: 'InvalidStepName' } });
    expect(deriveRetryKey({ ...base, phase: 'WRITE' as never })).toEqual({
      ok: false,
      error: { kind: 'UnknownEnumeration' },
    });
  });
});

describe('digest helpers', () => {
  it('recognises only 64 lowercase hex digits', () => {
    expect(isDigestHex('ab'.repeat(32))).toBe(true);
    expect(isDigestHex('AB'.repeat(32))).toBe(false);
    expect(isDigestHex(`${'ab'.repeat(32)}\n`)).toBe(false);
    expect(isDigestHex(42)).toBe(false);
  });

  it('decodes digests to 32 bytes or null, never a truncated buffer', () => {
    expect(digestBytes('01'.repeat(32))?.equals(Buffer.alloc(32, 1))).toBe(true);
    expect(digestBytes('0g'.repeat(32))).toBeNull();
    expect(digestBytes(new Uint8Array(33))).toBeNull();
  });

  it('shows the first 12 hex digits of a key', () => {
    expect(retryKeyShortHex(keyHex(base))).toBe(keyHex(base).slice(0, 12));
    expect(retryKeyShortHex(keyHex(base))).toHaveLength(12);
  });
});
