import 'server-only';
import { cookies } from 'next/headers';
import { cache } from 'react';
import type { Actor } from '../domain/actor';
import { BROWSER_ZONE_COOKIE, resolveZone, type TimeZonePreference } from '../domain/time-zone';
import { readTimeZonePreference } from '../queries/time-zone-preference';
import { runtime } from './composition-root';
import { sessionTimeZone } from './session';

export interface ResolvedTimeZone {
  preference: TimeZonePreference;
  /** The IANA zone ('UTC' included) this request's times are shown or written in. */
  zone: string;
}

function cookieZone(raw: string | undefined): string | null {
  if (!raw) return null;
  try {
    return decodeURIComponent(raw);
  } catch {
    return null;
  }
}

/**
 * The actor's zone for this request, once per render: their stored preference, and for
 * 'browser' the zone the browser wrote to the keel-tz cookie (a bad or missing cookie is
 * UTC until the page tells the browser's own; components/ui/time-zone.tsx). The
 * preference comes with the session's own read when that read made the actor, and is
 * read apart only when better-auth answered; both read the primary, so a change shows on
 * the very next render.
 */
export const currentTimeZone = cache(async (actor: Actor): Promise<ResolvedTimeZone> => {
  const preference = sessionTimeZone(actor) ?? (await readTimeZonePreference(runtime().db, actor.id));
  const browser = preference === 'browser' ? cookieZone((await cookies()).get(BROWSER_ZONE_COOKIE)?.value) : null;
  return { preference, zone: resolveZone(preference, browser) };
});
