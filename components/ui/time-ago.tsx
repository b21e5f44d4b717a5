import { useTimeZone } from './time-zone';

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

/** Always UTC, whatever the user chose: for what must not follow it. Times shown to people use useTimeZone. */
export const formatUtc = (at: Date): string => `${at.toISOString().slice(0, 19).replace('T', ' ')} UTC`;

/**
 * A time relative to the server's clock, with the absolute time in the user's zone beside it
 * (components/ui/time-zone.tsx). `column`: the table's heading names the zone as at `now`
 * (useTimeZone().heading), so the cell leaves it out, unless this time's offset is another
 * (a row from the other side of a daylight-saving change).
 */
export function TimeAgo({ at, now, column }: { at: Date; now: Date; column?: boolean }) {
  const tz = useTimeZone();
  const absolute = column ? tz.inColumn(at, now) : tz.format(at);
  return (
    <time dateTime={at.toISOString()} title={tz.zone === 'UTC' ? tz.format(at) : `${tz.format(at)} (${tz.zone})`}>
      {formatRelative(at, now)} <span className="text-zinc-500 dark:text-zinc-400">· {absolute}</span>
    </time>
  );
}
