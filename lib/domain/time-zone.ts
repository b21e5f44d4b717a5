/**
 * Time as each user wants it (docs/console.md#time-zone): the preference, its check and
 * the one formatting home for every time Keel shows or exports. zod-free and pure, so
 * the browser and the server format an instant the same way (no hydration mismatch).
 *
 * Only numeric fields come from Intl (year to second, 24-hour): those agree across ICU
 * versions, while zone abbreviations ("CET", "GMT+1") do not. The offset is computed from
 * them, never read from a zone name.
 */

/** 'utc', 'browser' (the zone the browser runs in) or an IANA zone name such as Europe/Berlin. */
export type TimeZonePreference = string;

export const DEFAULT_TIME_ZONE_PREFERENCE = 'utc';
export const UTC_ZONE = 'UTC';
/** The cookie the browser writes its own zone to, so the server renders 'browser' in it (lib/server/time-zone.ts). */
export const BROWSER_ZONE_COOKIE = 'keel-tz';

export const TIME_ZONE_MESSAGE = 'Choose UTC, your browser’s zone, or a zone name such as Europe/Berlin.';

// Region/City names (Etc/GMT+5, America/Argentina/Buenos_Aires, EST5EDT); never an offset such as +01:00.
export const ZONE_NAME_SHAPE = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+){0,2}$/;

/** The zone's canonical name (Intl's spelling, as europe/berlin becomes Europe/Berlin), or null when no zone has it. */
export function canonicalZone(name: string): string | null {
  if (name.length > 64 || !ZONE_NAME_SHAPE.test(name)) return null;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

/** A preference as stored: 'utc', 'browser' or a canonical zone name; null when it is none of them. */
export function parseTimeZonePreference(raw: unknown): TimeZonePreference | null {
  if (typeof raw !== 'string') return null;
  const text = raw.trim();
  if (text === 'utc' || text === 'browser') return text;
  const zone = canonicalZone(text);
  if (zone === null) return null;
  return zone === UTC_ZONE || zone === 'Etc/UTC' ? 'utc' : zone;
}

/** The zone a preference shows times in; 'browser' takes the browser's zone when it is known and valid. */
export function resolveZone(preference: TimeZonePreference, browserZone: string | null | undefined): string {
  if (preference === 'browser') return (browserZone && canonicalZone(browserZone)) || UTC_ZONE;
  if (preference === 'utc') return UTC_ZONE;
  return canonicalZone(preference) ?? UTC_ZONE;
}

const formats = new Map<string, Intl.DateTimeFormat | null>();

function formatOf(zone: string): Intl.DateTimeFormat | null {
  let format = formats.get(zone);
  if (format === undefined) {
    try {
      format = new Intl.DateTimeFormat('en-US', {
        timeZone: zone,
        hourCycle: 'h23',
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        second: '2-digit',
      });
    } catch {
      // A zone this engine does not know (an older browser): shown in UTC, labelled so.
      format = null;
    }
    formats.set(zone, format);
  }
  return format;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** The wall clock in `zone` at an instant, to the second. */
function wallClock(ms: number, zone: string): [number, number, number, number, number, number] {
  const format = zone === UTC_ZONE ? null : formatOf(zone);
  if (!format) {
    const d = new Date(ms);
    return [
      d.getUTCFullYear(),
      d.getUTCMonth() + 1,
      d.getUTCDate(),
      d.getUTCHours(),
      d.getUTCMinutes(),
      d.getUTCSeconds(),
    ];
  }
  const parts: Record<string, number> = {};
  for (const part of format.formatToParts(ms)) if (part.type !== 'literal') parts[part.type] = Number(part.value);
  return [parts.year!, parts.month!, parts.day!, parts.hour! % 24, parts.minute!, parts.second!];
}

/** Minutes east of UTC in `zone` at an instant (60 for Europe/Berlin in winter). */
export function zoneOffsetMinutes(zone: string, ms: number): number {
  const [y, mo, d, h, mi, s] = wallClock(ms, zone);
  const second = Math.floor(ms / 1000) * 1000;
  return Math.round((Date.UTC(y, mo - 1, d, h, mi, s) - second) / 60_000);
}

/** The zone Keel can actually format in: an unknown one falls back to UTC, so labels never lie. */
export const usableZone = (zone: string): string => (zone === UTC_ZONE || formatOf(zone) ? zone : UTC_ZONE);

/** "+01:00", "-05:30", or "Z" for zero when `z` is set (ISO 8601). */
function offsetText(minutes: number, z: boolean): string {
  if (minutes === 0 && z) return 'Z';
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  return `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/** How a zone is named where times are shown: "UTC", or its offset at that instant ("UTC+01:00"). */
export function zoneLabel(zone: string, ms: number): string {
  return zone === UTC_ZONE ? 'UTC' : `UTC${offsetText(zoneOffsetMinutes(zone, ms), false)}`;
}

/** "2026-12-03 11:00:00", the wall clock in `zone`. */
export function formatWallTime(ms: number, zone: string): string {
  const [y, mo, d, h, mi, s] = wallClock(ms, zone);
  return `${pad(y, 4)}-${pad(mo)}-${pad(d)} ${pad(h)}:${pad(mi)}:${pad(s)}`;
}

/** "2026-12-03 11:00:00 UTC+01:00", or "… UTC" in UTC: a time that names its zone. */
export const formatZonedTime = (ms: number, zone: string): string =>
  `${formatWallTime(ms, zone)} ${zoneLabel(zone, ms)}`;

/**
 * ISO 8601 with the zone's offset ("2026-12-03T11:00:00.123456+01:00"; "Z" in UTC), for
 * files a machine reads back. `fraction` is the digits after the second, kept as given
 * (the audit log's microseconds).
 */
export function isoInZone(ms: number, zone: string, fraction = ''): string {
  const [date, time] = formatWallTime(ms, zone).split(' ');
  const offset = zone === UTC_ZONE ? 'Z' : offsetText(zoneOffsetMinutes(zone, ms), false);
  return `${date}T${time}${fraction ? `.${fraction}` : ''}${offset}`;
}

const ISO_UTC = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(?:Z|\+00:00)$/;

/** A UTC ISO text ("…T10:00:00.123456Z") in `zone`, its fraction kept; anything else unchanged. */
export function utcIsoInZone(iso: string, zone: string): string {
  const match = ISO_UTC.exec(iso);
  if (!match) return iso;
  if (zone === UTC_ZONE) return iso;
  return isoInZone(Date.parse(`${match[1]}Z`), zone, match[2] ?? '');
}

/** A datetime-local input's value ("2026-12-03T11:00", seconds when there are some) for an instant in `zone`. */
export function toWallTimeInput(ms: number, zone: string): string {
  const [date, time] = formatWallTime(ms, zone).split(' ') as [string, string];
  return `${date}T${time.endsWith(':00') ? time.slice(0, 5) : time}`;
}

const WALL_INPUT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,3})?)?$/;
const DAY_MS = 86_400_000;

/**
 * The instant a datetime-local value names in `zone`, or null when it is not one. A wall
 * time the zone repeats (clocks going back) is its earlier instant; one the zone skips
 * (clocks going forward) moves forward by the gap, as Temporal's "compatible" does.
 */
export function fromWallTimeInput(local: string, zone: string): number | null {
  const match = WALL_INPUT.exec(local);
  if (!match) return null;
  const [y, mo, d, h, mi, s] = match.slice(1, 7).map((v) => Number(v ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const asUtc = Date.UTC(y, mo - 1, d, h, mi, s);
  if (Number.isNaN(asUtc) || new Date(asUtc).getUTCDate() !== d || h > 23) return null;
  if (zone === UTC_ZONE) return asUtc;
  // The offsets a day either side: a wall time lies in one of them (two around a change).
  const before = zoneOffsetMinutes(zone, asUtc - DAY_MS);
  const after = zoneOffsetMinutes(zone, asUtc + DAY_MS);
  const matches = [...new Set([before, after])]
    .map((offset) => asUtc - offset * 60_000)
    .filter((ms) => formatWallTime(ms, zone) === formatWallTime(asUtc, UTC_ZONE))
    .sort((a, b) => a - b);
  return matches[0] ?? asUtc - before * 60_000;
}
