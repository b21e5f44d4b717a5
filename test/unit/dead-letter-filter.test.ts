import { describe, expect, it } from 'vitest';
import type { UncheckedDeadLetterFilter } from '@/lib/domain/dead-letter-filter';
import { normalizeDeadLetterFilter } from '@/lib/services/bulk-replay';

describe('bulk replay filters', () => {
  it('keeps only the fields a filter may hold', () => {
    const filter = { reason: 'rpc', minAgeMs: 0, maxAgeMs: 10, minAttempts: 1, maxAttempts: 6, receiptIdPrefix: 'rcpt_', extra: 1 } as UncheckedDeadLetterFilter;
    expect(normalizeDeadLetterFilter(filter)).toEqual({
      ok: true,
      value: { reason: 'rpc', minAgeMs: 0, maxAgeMs: 10, minAttempts: 1, maxAttempts: 6, receiptIdPrefix: 'rcpt_' },
    });
    expect(normalizeDeadLetterFilter({ receiptIdPrefix: '' })).toEqual({ ok: true, value: {} });
  });

  it.each<[string, UncheckedDeadLetterFilter]>([
    ['an unknown reason code', { reason: 'timeout' }],
    ['a skip reason, which never dead-letters', { reason: 'denied' }],
    ['a negative age', { minAgeMs: -1 }],
    ['a fractional age', { maxAgeMs: 1.5 }],
    ['attempts above u32', { maxAttempts: 2 ** 32 }],
    ['a minimum age above the maximum', { minAgeMs: 10, maxAgeMs: 5 }],
    ['minimum attempts above the maximum', { minAttempts: 3, maxAttempts: 2 }],
    ['a prefix over 256 characters', { receiptIdPrefix: 'x'.repeat(257) }],
  ])('refuses %s', (_name, filter) => {
    expect(normalizeDeadLetterFilter(filter)).toMatchObject({ ok: false, error: { code: 'INVALID_FILTER' } });
  });
});
