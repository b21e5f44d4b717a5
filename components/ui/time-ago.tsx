const UNITS: [number, string][] = [
  [86_400_000, 'd'],
  [3_600_000, 'h'],
  [60_000, 'min'],
  [1_000, 's'],
];

export function formatRelative(at: Date, now: Date): string {
  const delta = now.getTime() - at.getTime();
  const magnitude = Math.abs(delta);
  for (const [size, unit] of UNITS) {
    if (magnitude >= size) {
      const value = Math.floor(magnitude / size);
      return delta >= 0 ? `${value} ${unit} ago` : `in ${value} ${unit}`;
    }
  }
  return 'just now';
}

export const formatUtc = (at: Date): string => `${at.toISOString().slice(0, 19).replace('T', ' ')} UTC`;

/** A time shown relative to the server's clock, with the absolute UTC time beside it. */
export function TimeAgo({ at, now }: { at: Date; now: Date }) {
  return (
    <time dateTime={at.toISOString()} title={formatUtc(at)}>
      {formatRelative(at, now)} <span className="text-zinc-500 dark:text-zinc-400">· {formatUtc(at)}</span>
    </time>
  );
}
