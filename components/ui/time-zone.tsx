'use client';

import { createContext, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import {
  BROWSER_ZONE_COOKIE,
  formatWallTime,
  formatZonedTime,
  fromWallTimeInput,
  resolveZone,
  toWallTimeInput,
  usableZone,
  UTC_ZONE,
  zoneLabel,
  type TimeZonePreference,
} from '@/lib/domain/time-zone';

export interface TimeZoneView {
  /** What the user chose: 'utc', 'browser' or a zone name. */
  preference: TimeZonePreference;
  /** The IANA zone times are shown in now ('UTC' included); for a chart's axis, give it this. */
  zone: string;
  /** "2026-12-03 11:00:00 UTC+01:00": a time that names its zone. */
  format: (at: Date | number) => string;
  /** "2026-12-03 11:00:00": for a cell under a heading that names the zone. */
  wallTime: (at: Date | number) => string;
  /** "UTC" or "UTC+01:00": the zone as shown at that instant. */
  label: (at: Date | number) => string;
  /** A table column's heading naming the zone once, as at `at` (the table's "now"): "Time (UTC+01:00)". */
  heading: (name: string, at: Date | number) => string;
  /** A time in a column under `heading(name, now)`: its wall time, with its zone only when its offset is another. */
  inColumn: (at: Date | number, now: Date | number) => string;
  /** A datetime-local value for an instant, in the zone; '' for none. */
  toInput: (at: Date | number | null | undefined) => string;
  /** The instant a datetime-local value names in the zone, or null. */
  fromInput: (local: string) => Date | null;
}

const ms = (at: Date | number) => (typeof at === 'number' ? at : at.getTime());

function viewOf(preference: TimeZonePreference, zone: string): TimeZoneView {
  return {
    preference,
    zone,
    format: (at) => formatZonedTime(ms(at), zone),
    wallTime: (at) => formatWallTime(ms(at), zone),
    label: (at) => zoneLabel(zone, ms(at)),
    heading: (name, at) => `${name} (${zoneLabel(zone, ms(at))})`,
    inColumn: (at, now) =>
      zoneLabel(zone, ms(at)) === zoneLabel(zone, ms(now))
        ? formatWallTime(ms(at), zone)
        : formatZonedTime(ms(at), zone),
    toInput: (at) => (at === null || at === undefined || Number.isNaN(ms(at)) ? '' : toWallTimeInput(ms(at), zone)),
    fromInput: (local) => {
      const at = fromWallTimeInput(local, zone);
      return at === null ? null : new Date(at);
    },
  };
}

const TimeZoneContext = createContext<TimeZoneView>(viewOf('utc', UTC_ZONE));

/** The browser's own zone, written to a cookie so the server renders a 'browser' preference in it next time. */
function browserZone(): string {
  const own = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const cookie = `${BROWSER_ZONE_COOKIE}=${encodeURIComponent(own)}`;
  if (!document.cookie.split('; ').includes(cookie)) {
    // biome-ignore lint/suspicious/noDocumentCookie: one lax, non-secret preference cookie read by the server
    document.cookie = `${cookie}; path=/; max-age=31536000; samesite=lax`;
  }
  return own;
}

/**
 * The zone every time on a console page is shown in (docs/console.md#time-zone). The
 * server renders with `zone`, resolved from the user's stored preference and, for
 * 'browser', the keel-tz cookie the browser wrote (the root layout's script writes it
 * before anything else runs, the sign-in page included): the first render here is the
 * server's, so hydration matches and no time flashes. Only when that cookie was missing
 * or stale (a first visit, a laptop that changed zone) does the page re-render once, after
 * hydration, in the browser's zone.
 */
export function TimeZoneProvider({
  preference,
  zone,
  children,
}: {
  preference: TimeZonePreference;
  zone: string;
  children: ReactNode;
}) {
  const [own, setOwn] = useState<string | null>(null);
  useEffect(() => setOwn(browserZone()), []);
  const shown = preference === 'browser' && own ? resolveZone('browser', own) : zone;
  const value = useMemo(() => viewOf(preference, usableZone(shown)), [preference, shown]);
  return <TimeZoneContext.Provider value={value}>{children}</TimeZoneContext.Provider>;
}

/** The user's zone and how to show a time in it: the one hook for tables, filters and charts. */
export const useTimeZone = (): TimeZoneView => useContext(TimeZoneContext);

/** A time that names its zone ("2026-12-03 11:00:00 UTC+01:00"), as a <time> element. */
export function ZonedTime({ at }: { at: Date | number }) {
  const tz = useTimeZone();
  return <time dateTime={new Date(ms(at)).toISOString()}>{tz.format(at)}</time>;
}
