import type { TimeZoneView } from '../ui/time-zone';

/** A minute in the user's zone, naming the zone: "2026-12-03 11:42 UTC+01:00". */
export const formatMinute = (ms: number, tz: TimeZoneView): string => `${tz.wallTime(ms).slice(0, 16)} ${tz.label(ms)}`;

/** A bucket as a span in the user's zone: "2026-12-03 11:42–11:43 UTC+01:00" (hours: "11:00–12:00"). */
export function formatBucket(startMs: number, stepMs: number, tz: TimeZoneView): string {
  return `${tz.wallTime(startMs).slice(0, 16)}–${tz.wallTime(startMs + stepMs).slice(11, 16)} ${tz.label(startMs)}`;
}
