import 'server-only';
import { headers } from 'next/headers';
import { redirect } from 'next/navigation';
import { cache } from 'react';
import { readLiveSession, sessionRules, signedSessionToken, type SessionRules } from '../auth/live-session';
import type { KeelAuth } from '../auth/auth';
import { can, isRole, type Permission } from '../domain/roles';
import type { Actor } from '../domain/actor';
import type { TimeZonePreference } from '../domain/time-zone';
import { runtime } from './composition-root';

export type { Actor };

const rulesByAuth = new WeakMap<KeelAuth, Promise<SessionRules | null>>();

/**
 * The stored time zone preference the direct session read brought along with each actor
 * it made. An actor lives for one request, so this is that request's value.
 */
const timeZoneByActor = new WeakMap<Actor, TimeZonePreference>();

/** The actor's time zone preference as their session read found it; undefined when better-auth answered. */
export const sessionTimeZone = (actor: Actor): TimeZonePreference | undefined => timeZoneByActor.get(actor);

function rulesOf(auth: KeelAuth): Promise<SessionRules | null> {
  let rules = rulesByAuth.get(auth);
  if (!rules) {
    rules = auth.$context.then(sessionRules);
    rulesByAuth.set(auth, rules);
  }
  return rules;
}

/**
 * The signed-in actor, or null (no session, a banned user, or a role Keel does not know).
 * Once per server render (React's cache): the console layout and the page both ask, and
 * each ask is one statement on the primary. Outside a render (route handlers, actions)
 * every call reads afresh. A live session not yet due for refresh is read directly
 * (lib/auth/live-session.ts); every other case goes through better-auth's getSession.
 */
export const currentActor = cache(async function currentActor(): Promise<Actor | null> {
  const { auth, pool } = runtime();
  const requestHeaders = await headers();
  const rules = await rulesOf(auth);
  const live = rules ? await readLiveSession(pool, rules, requestHeaders.get('cookie')) : undefined;
  const user = live ?? (await auth.api.getSession({ headers: requestHeaders }))?.user;
  if (!user) return null;
  const role = (user as { role?: unknown }).role;
  if (!isRole(role) || (user as { banned?: boolean | null }).banned) return null;
  const login = (user as { username?: string | null }).username ?? user.email;
  const actor: Actor = { id: user.id, login, name: user.name, role };
  if (live) timeZoneByActor.set(actor, live.timeZone);
  return actor;
});

/**
 * The token of the request's session, for what outlives the request and must check the
 * session again later (the event stream, lib/server/live-stream-sessions.ts). Null
 * without a session. It never leaves the server.
 */
export async function currentSessionToken(): Promise<string | null> {
  const { auth } = runtime();
  const requestHeaders = await headers();
  const rules = await rulesOf(auth);
  const cookie = requestHeaders.get('cookie');
  const signed = rules && cookie ? signedSessionToken(cookie, rules) : undefined;
  if (signed) return signed;
  return (await auth.api.getSession({ headers: requestHeaders }))?.session.token ?? null;
}

/** For pages: the actor, or a redirect to sign-in. */
export async function requireActor(): Promise<Actor> {
  const actor = await currentActor();
  if (!actor) redirect('/sign-in');
  return actor;
}

export type ApiAuth = { ok: true; actor: Actor } | { ok: false; response: Response };

/** For route handlers: the actor with the permission, or the 401/403 JSON answer. */
export async function authorizeRequest(permission: Permission): Promise<ApiAuth> {
  const actor = await currentActor();
  if (!actor) {
    return {
      ok: false,
      response: Response.json({ code: 'UNAUTHENTICATED', message: 'Sign in first.' }, { status: 401 }),
    };
  }
  if (!can(actor.role, permission)) {
    return {
      ok: false,
      response: Response.json(
        { code: 'FORBIDDEN', message: `The ${actor.role} role may not do this.` },
        { status: 403 },
      ),
    };
  }
  return { ok: true, actor };
}
