import 'server-only';
import { headers } from 'next/headers';
import { redirect } from 'next/navigation';
import { cache } from 'react';
import { can, isRole, type Permission } from '../domain/roles';
import type { Actor } from '../domain/actor';
import { runtime } from './runtime';

export type { Actor };

/**
 * The signed-in actor, or null (no session, a banned user, or a role Keel does not know).
 * Once per server render (React's cache): the console layout and the page both ask, and
 * each ask is a session and a user read. Outside a render (route handlers, actions)
 * every call reads afresh.
 */
export const currentActor = cache(async function currentActor(): Promise<Actor | null> {
  const session = await runtime().auth.api.getSession({ headers: await headers() });
  if (!session) return null;
  const { user } = session;
  const role = (user as { role?: unknown }).role;
  if (!isRole(role) || (user as { banned?: boolean | null }).banned) return null;
  const login = (user as { username?: string | null }).username ?? user.email;
  return { id: user.id, login, name: user.name, role };
});

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
    return { ok: false, response: Response.json({ code: 'UNAUTHENTICATED', message: 'Sign in first.' }, { status: 401 }) };
  }
  if (!can(actor.role, permission)) {
    return {
      ok: false,
      response: Response.json({ code: 'FORBIDDEN', message: `The ${actor.role} role may not do this.` }, { status: 403 }),
    };
  }
  return { ok: true, actor };
}
