import { describe, expect, it } from 'vitest';
import { exactMs, humanDuration, thresholdPhrase } from '../../lib/domain/duration';

describe('humanDuration', () => {
  it.each([
    [0, '0 ms'],
    [1, '1 ms'],
    [850, '850 ms'],
    [999, '999 ms'],
    [1_000, '1 s'],
    [1_234, '1 s 234 ms'],
    [59_999, '59 s 999 ms'],
    [60_000, '1 min'],
    [61_500, '1 min 1 s'],
    [900_000, '15 min'],
    [899_999, '14 min 59 s'],
    [3_600_000, '1 h'],
    [10_403_009, '2 h 53 min'],
    [7_200_000 + 5_000, '2 h'],
    [86_400_000, '1 d'],
    [3 * 86_400_000 + 4 * 3_600_000 + 59 * 60_000, '3 d 4 h'],
    [400 * 86_400_000, '400 d'],
  ])('%d ms reads %s', (ms, text) => {
    expect(humanDuration(ms)).toBe(text);
  });

  it('truncates, never rounding up to the next unit or to a threshold', () => {
    expect(humanDuration(3_599_999)).toBe('59 min 59 s');
    expect(humanDuration(1_999.9)).toBe('1 s 999 ms');
    expect(humanDuration(0.6)).toBe('0 ms');
  });

  it('keeps the sign of a negative duration', () => {
    expect(humanDuration(-1_500)).toBe('-1 s 500 ms');
  });

  it('reads "unknown" for values that are not finite numbers', () => {
    expect(humanDuration(Number.NaN)).toBe('unknown');
    expect(humanDuration(Number.POSITIVE_INFINITY)).toBe('unknown');
    expect(humanDuration('12' as unknown as number)).toBe('unknown');
    expect(exactMs(Number.NaN)).toBe('unknown');
  });
});

describe('exactMs and thresholdPhrase', () => {
  it('writes the exact milliseconds with thousands separators', () => {
    expect(exactMs(10_403_009)).toBe('10,403,009 ms');
    expect(exactMs(3)).toBe('3 ms');
  });

  it('states the threshold as the strict rule applies it', () => {
    expect(thresholdPhrase(900_000)).toBe('more than 15 min');
    expect(thresholdPhrase(90_000)).toBe('more than 1 min 30 s');
  });
});
