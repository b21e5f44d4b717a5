import { describe, expect, it } from 'vitest';
import {
  deadLetterFilterOfWords,
  deadLetterFilterSchema,
  selectionFilter,
  type UncheckedDeadLetterFilter,
} from '@/lib/domain/dead-letter-filter';
import { deadLetterFiltersSchema, toDeadLetterFilter } from '@/lib/queries/settlements-types';

describe('bulk replay filters', () => {
  it('keeps only the fields a filter may hold', () => {
    const filter = {
      reason: 'rpc',
      minAgeMs: 0,
      maxAgeMs: 10,
      minAttempts: 1,
      maxAttempts: 6,
      receiptIdPrefix: 'rcpt_',
      extra: 1,
    } as UncheckedDeadLetterFilter;
    expect(deadLetterFilterSchema.safeParse(filter)).toMatchObject({
      success: true,
      data: { reason: 'rpc', minAgeMs: 0, maxAgeMs: 10, minAttempts: 1, maxAttempts: 6, receiptIdPrefix: 'rcpt_' },
    });
    expect(deadLetterFilterSchema.parse(filter)).not.toHaveProperty('extra');
    expect(deadLetterFilterSchema.safeParse({ receiptIdPrefix: '' })).toEqual({ success: true, data: {} });
  });

  it('keeps a selection as the schema does: each receipt once, sorted', () => {
    const ticked = ['r-2', 'r-1', 'r-2', 'r-10'];
    expect(selectionFilter(ticked)).toEqual({ receiptIds: ['r-1', 'r-10', 'r-2'] });
    expect(deadLetterFilterSchema.parse({ receiptIds: ticked })).toEqual(selectionFilter(ticked));
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
    expect(deadLetterFilterSchema.safeParse(filter).success).toBe(false);
  });
});

describe('the URL words of a dead-letter filter', () => {
  it('become the filter a bulk replay freezes, ages in milliseconds', () => {
    const words = deadLetterFiltersSchema.parse({
      q: 'rcpt_',
      reason: 'rpc',
      minAttempts: '1',
      maxAttempts: '6',
      minAge: '30m',
      maxAge: '2d',
      cursor: '',
    });
    expect(toDeadLetterFilter(words)).toEqual({
      receiptIdPrefix: 'rcpt_',
      reason: 'rpc',
      minAttempts: 1,
      maxAttempts: 6,
      minAgeMs: 30 * 60_000,
      maxAgeMs: 2 * 86_400_000,
    });
    expect(toDeadLetterFilter(deadLetterFiltersSchema.parse({ q: '', reason: '' }))).toEqual({});
  });

  it.each<[string, Record<string, string>, string]>([
    ['a minimum age above the maximum', { minAge: '2h', maxAge: '30m' }, 'maxAge'],
    ['minimum attempts above the maximum', { minAttempts: '4', maxAttempts: '2' }, 'maxAttempts'],
    ['attempts above u32', { maxAttempts: String(2 ** 32) }, 'maxAttempts'],
    ['an unknown reason code', { reason: 'timeout' }, 'reason'],
    ['a prefix over 256 characters', { q: 'x'.repeat(257) }, 'q'],
  ])('refuses %s on the field the form shows', (_name, words, field) => {
    const parsed = deadLetterFiltersSchema.safeParse(words);
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((issue) => issue.path[0])).toContain(field);
  });
});

describe('the bulk replay dialog reading the URL words without zod', () => {
  it.each<[string, Record<string, string>]>([
    ['no words', {}],
    ['every word empty', { q: '', reason: '', minAttempts: '', maxAttempts: '', minAge: '', maxAge: '' }],
    ['every word set', { q: 'rcpt_', reason: 'rpc', minAttempts: '1', maxAttempts: '6', minAge: '30m', maxAge: '2d' }],
    ['a prefix with spaces, kept as given', { q: ' rcpt ' }],
    ['a prefix of 256 characters', { q: 'x'.repeat(256) }],
    ['a prefix over 256 characters', { q: 'x'.repeat(257) }],
    ['a prefix with NUL', { q: 'rc\u0000pt' }],
    ['a prefix with a tab', { q: 'rc\tpt' }],
    ['a prefix with a lone surrogate', { q: '\uD800' }],
    ['an unknown reason code', { reason: 'timeout' }],
    ['a skip reason', { reason: 'denied' }],
    ['attempts with spaces around them', { minAttempts: ' 3 ' }],
    ['attempts in hexadecimal', { minAttempts: '0x10' }],
    ['attempts in exponent form', { maxAttempts: '1e3' }],
    ['fractional attempts', { minAttempts: '1.5' }],
    ['negative attempts', { minAttempts: '-1' }],
    ['attempts that are not a number', { maxAttempts: 'many' }],
    ['attempts of spaces', { maxAttempts: '  ' }],
    ['attempts at u32', { maxAttempts: String(2 ** 32 - 1) }],
    ['attempts above u32', { maxAttempts: String(2 ** 32) }],
    ['minimum attempts above the maximum', { minAttempts: '4', maxAttempts: '2' }],
    ['equal attempts', { minAttempts: '2', maxAttempts: '2' }],
    ['an age with spaces around it', { minAge: ' 30m ' }],
    ['an age of spaces', { maxAge: '   ' }],
    ['an age without a unit', { minAge: '30' }],
    ['an age in weeks', { minAge: '2w' }],
    ['an age of seven digits', { maxAge: '1234567s' }],
    ['the largest age', { maxAge: '999999d' }],
    ['a minimum age above the maximum', { minAge: '2h', maxAge: '30m' }],
    ['equal ages in different units', { minAge: '60m', maxAge: '1h' }],
  ])('agrees with deadLetterFiltersSchema on %s', (_name, words) => {
    const parsed = deadLetterFiltersSchema.safeParse(words);
    expect(deadLetterFilterOfWords(words)).toEqual(parsed.success ? toDeadLetterFilter(parsed.data) : null);
  });
});
