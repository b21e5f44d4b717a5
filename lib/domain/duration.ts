const UNITS: readonly [number, string][] = [
  [86_400_000, 'd'],
  [3_600_000, 'h'],
  [60_000, 'min'],
  [1_000, 's'],
  [1, 'ms'],
];

/**
 * A duration as a person reads it: its largest unit and the next one, truncated
 * ("2 h 53 min", "4 s 200 ms", "850 ms"; a zero second unit is left out: "15 min").
 * It never rounds up, so an inactivity just below a threshold never reads as the
 * threshold itself. Fractions of a millisecond are dropped; a negative duration
 * keeps its sign; a value that is not a finite number reads "unknown".
 */
export function humanDuration(ms: number): string {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return 'unknown';
  const magnitude = Math.floor(Math.abs(ms));
  if (magnitude === 0) return '0 ms';
  const sign = ms < 0 ? '-' : '';
  const first = UNITS.findIndex(([size]) => magnitude >= size);
  const [size, unit] = UNITS[first]!;
  const whole = Math.floor(magnitude / size);
  const parts = [`${whole} ${unit}`];
  const next = UNITS[first + 1];
  if (next) {
    const rest = Math.floor((magnitude - whole * size) / next[0]);
    if (rest > 0) parts.push(`${rest} ${next[1]}`);
  }
  return sign + parts.join(' ');
}

/** The exact value behind a human duration, for a title or the raw evidence: "10,403,009 ms". */
export const exactMs = (ms: number): string =>
  typeof ms === 'number' && Number.isFinite(ms) ? `${ms.toLocaleString('en-US')} ms` : 'unknown';

/** A stale threshold as the rule applies it: strictly more than the threshold counts as stale. */
export const thresholdPhrase = (thresholdMs: number): string => `more than ${humanDuration(thresholdMs)}`;
