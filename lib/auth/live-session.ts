import { createHmac, timingSafeEqual } from 'node:crypto';
import type pg from 'pg';

/**
 * The session read every page view and API request starts with, in one statement and
 * no more CPU than an HMAC. better-auth stays the authority on sessions: this answers
 * only the common case it would answer without writing anything, a signed cookie naming
 * a live session that is not yet due to be refreshed, and returns what better-auth's
 * getSession would. Every other case (no cookie or a bad signature, a session unknown,
 * expired or due for refresh, a second copy of the cookie, the "don't remember me" or
 * cached-session cookies) is `undefined`: ask better-auth, which refreshes, expires and
 * clears cookies by its own rules.
 */

/** What better-auth's context says about its cookies and sessions (read once from `auth.$context`). */
export interface SessionRules {
  secret: string;
  /** The session token's cookie, prefix included (`__Secure-` behind https). */
  tokenCookie: string;
  /** Cookies whose presence sends a request down better-auth's own path. */
  otherCookies: readonly string[];
  expiresInSeconds: number;
  updateAgeSeconds: number;
}

export interface LiveSessionUser {
  id: string;
  name: string;
  email: string;
  username: string | null;
  role: string | null;
  banned: boolean | null;
  /**
   * Keel's own column, not better-auth's: the user's time zone preference, which every
   * console page needs (lib/server/time-zone.ts), read here so a page view makes one
   * statement for both.
   */
  timeZone: string;
}

/** Minimal view of better-auth's context, as `auth.$context` resolves it. */
interface AuthContextView {
  secret: string;
  authCookies: { sessionToken: { name: string }; dontRememberToken: { name: string }; sessionData: { name: string } };
  sessionConfig: { expiresIn: number; updateAge: number };
  options: { session?: object };
}

interface SessionOptionsView {
  cookieCache?: { enabled?: boolean };
  disableSessionRefresh?: boolean;
  deferSessionRefresh?: boolean;
}

/**
 * The rules of a better-auth instance, or null when it is configured in a way this
 * read does not follow (cookie cache, refresh switched off or deferred): then every
 * request goes through better-auth.
 */
export function sessionRules(context: AuthContextView): SessionRules | null {
  const session = context.options.session as SessionOptionsView | undefined;
  if (session?.cookieCache?.enabled || session?.disableSessionRefresh || session?.deferSessionRefresh) return null;
  return {
    secret: context.secret,
    tokenCookie: context.authCookies.sessionToken.name,
    otherCookies: [context.authCookies.dontRememberToken.name, context.authCookies.sessionData.name],
    expiresInSeconds: context.sessionConfig.expiresIn,
    updateAgeSeconds: context.sessionConfig.updateAge,
  };
}

/**
 * The session token from a Cookie header, checked as better-call's getSignedCookie
 * checks it (the first cookie of that name, `token.signature` with a 44-character
 * base64 HMAC-SHA256 of the token under the secret); undefined when better-auth must
 * decide (no such cookie, two of them, or another cookie that changes its path), null
 * when the signature is wrong.
 */
export function signedSessionToken(cookieHeader: string, rules: SessionRules): string | null | undefined {
  let value: string | undefined;
  for (const chunk of cookieHeader.split(';')) {
    const eq = chunk.indexOf('=');
    if (eq === -1) continue;
    const name = chunk.slice(0, eq).trim();
    if (name === rules.tokenCookie) {
      if (value !== undefined) return undefined;
      value = decodeCookieValue(chunk.slice(eq + 1).trim());
    } else if (rules.otherCookies.some((other) => name === other || name.startsWith(`${other}.`))) {
      return undefined;
    }
  }
  if (value === undefined) return undefined;
  const dot = value.lastIndexOf('.');
  if (dot < 1) return null;
  const token = value.slice(0, dot);
  const signature = Buffer.from(value.slice(dot + 1));
  if (signature.length !== 44 || signature[43] !== 0x3d) return null;
  const expected = Buffer.from(createHmac('sha256', rules.secret).update(token).digest('base64'));
  return timingSafeEqual(expected, signature) ? token : null;
}

function decodeCookieValue(raw: string): string {
  const unquoted = raw.charCodeAt(0) === 34 ? raw.slice(1, -1) : raw;
  if (!unquoted.includes('%')) return unquoted;
  try {
    return decodeURIComponent(unquoted);
  } catch {
    return unquoted;
  }
}

const LIVE_SESSION_SQL = `
  select u.id, u.name, u.email, u.username, u.role, u.banned, u.time_zone as "timeZone",
         (extract(epoch from s.expires_at) * 1000)::float8 as expires_at_ms
    from keel.session s
    join keel."user" u on u.id = s.user_id
   where s.token = $1`;

/**
 * The signed-in user of a request when better-auth would answer without a write;
 * undefined when better-auth must answer (see the module comment).
 */
export async function readLiveSession(
  pool: pg.Pool,
  rules: SessionRules,
  cookieHeader: string | null,
  now = Date.now(),
): Promise<LiveSessionUser | undefined> {
  if (!cookieHeader) return undefined;
  const token = signedSessionToken(cookieHeader, rules);
  if (!token) return undefined;
  const { rows } = await pool.query<LiveSessionUser & { expires_at_ms: number }>(LIVE_SESSION_SQL, [token]);
  const row = rows[0];
  // Milliseconds, as better-auth sees the expiry through a Date.
  const expiresAt = row ? Math.floor(row.expires_at_ms) : 0;
  if (!row || expiresAt <= now) return undefined;
  // better-auth moves the expiry on once the session is `updateAge` old; that write is its own.
  const refreshDue = expiresAt - rules.expiresInSeconds * 1000 + rules.updateAgeSeconds * 1000 <= now;
  if (refreshDue) return undefined;
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    username: row.username,
    role: row.role,
    banned: row.banned,
    timeZone: row.timeZone,
  };
}
