import { describe, expect, it } from 'vitest';
import { compareLsn, formatLsn, InvalidLsnError, isLsn, parseLsn } from '../../lib/domain/lsn';

describe('WAL positions', () => {
  it('orders by the high half before the low half', () => {
    expect(compareLsn(parseLsn('1/0'), parseLsn('0/FFFFFFFF'))).toBe(1);
    expect(compareLsn(parseLsn('0/16B3748'), parseLsn('0/16B3750'))).toBe(-1);
    expect(compareLsn(parseLsn('16/B374D848'), parseLsn('16/b374d848'))).toBe(0);
  });

  it('round-trips through its text form', () => {
    for (const text of ['0/0', '16/B374D848', 'FFFFFFFF/FFFFFFFF']) expect(formatLsn(parseLsn(text))).toBe(text);
  });

  it('refuses anything else with a typed error', () => {
    for (const text of ['', '0', '0/', '/0', '1/2/3', 'G/0', '123456789/0', '0/0 ', "0/0';--"]) {
      expect(isLsn(text)).toBe(false);
      expect(() => parseLsn(text)).toThrow(InvalidLsnError);
    }
  });
});
