/**
 * Counts stay fast on large tables: exact up to the cap, then "10,000+". Apart from the
 * cursor codec (lib/domain/cursor.ts), whose use of Buffer would bring Node's Buffer
 * polyfill (about 7 kB gzip) into every page that shows a count.
 */
export const COUNT_CAP = 10_000;

export interface CappedCount {
  value: number;
  capped: boolean;
}

export const formatCappedCount = (count: CappedCount): string =>
  count.capped ? `${COUNT_CAP.toLocaleString('en-US')}+` : count.value.toLocaleString('en-US');
