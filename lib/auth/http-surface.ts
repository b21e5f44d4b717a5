import type { SignInLockout } from '../adapters/sign-in-lockout';
import { lockoutKey } from '../domain/sign-in-lockout';
import type { KeelAuth } from './auth';

export const AUTH_BASE_PATH = '/api/auth';

/**
 * The only better-auth endpoints reachable over HTTP: what the sign-in form, the
 * sign-out button and a session check use. Everything else (admin/*, update-user,
 * change-password, list-sessions, impersonation, ...) answers 404; user changes go
 * through Keel's audited actions, and server code calls `auth.api.*` directly.
 */
export const AUTH_HTTP_ENDPOINTS = ['POST /sign-in/username', 'POST /sign-out', 'GET /get-session'] as const;

const SIGN_IN = 'POST /sign-in/username';

export interface AuthSurfaceDeps {
  auth: KeelAuth;
  lockout: SignInLockout;
  /** Origins a sign-in may be posted from; any other (or none) is login CSRF. */
  allowedOrigins: readonly string[];
  clock?: () => Date;
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
}

const notFound = () => json(404, { code: 'NOT_FOUND', message: 'No such endpoint.' });

/** Reads the username from a sign-in body without consuming the request. */
async function typedUsername(request: Request): Promise<string | null> {
  try {
    const body: unknown = await request.clone().json();
    if (body && typeof body === 'object' && 'username' in body && typeof body.username === 'string') return body.username;
  } catch {
    // better-auth answers a malformed body itself
  }
  return null;
}

/**
 * A session token is for the HttpOnly cookie only: page scripts never see it, so
 * drop it from JSON bodies (sign-in's `token`, get-session's `session.token`).
 */
async function withoutTokens(response: Response): Promise<Response> {
  if (!response.headers.get('content-type')?.includes('application/json')) return response;
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return new Response(text, { status: response.status, headers: response.headers });
  }
  if (body && typeof body === 'object') {
    const record = body as Record<string, unknown>;
    delete record.token;
    if (record.session && typeof record.session === 'object') delete (record.session as Record<string, unknown>).token;
  }
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  return new Response(JSON.stringify(body), { status: response.status, headers });
}

/** The `/api/auth/*` handler: the allowlist, login-CSRF check, account lockout, and token stripping. */
export function createAuthSurface(deps: AuthSurfaceDeps): (request: Request) => Promise<Response> {
  const clock = deps.clock ?? (() => new Date());
  return async (request) => {
    const url = new URL(request.url);
    if (!url.pathname.startsWith(`${AUTH_BASE_PATH}/`)) return notFound();
    const endpoint = `${request.method} ${url.pathname.slice(AUTH_BASE_PATH.length)}`;
    if (!(AUTH_HTTP_ENDPOINTS as readonly string[]).includes(endpoint)) return notFound();
    if (endpoint !== SIGN_IN) return withoutTokens(await deps.auth.handler(request));

    const origin = request.headers.get('origin');
    if (!origin || !deps.allowedOrigins.includes(origin)) {
      return json(403, { code: 'FOREIGN_ORIGIN', message: 'Sign in from the console itself.' });
    }
    const requestId = request.headers.get('x-request-id');
    const typed = await typedUsername(request);
    const key = typed === null ? '' : lockoutKey(typed);
    if (key) {
      const remaining = await deps.lockout.refuseIfLocked(key, clock(), requestId);
      if (remaining > 0) {
        const seconds = Math.ceil(remaining / 1000);
        return json(
          429,
          { code: 'ACCOUNT_LOCKED', message: `Too many failed sign-ins for this account. Try again in ${seconds} s.` },
          { 'retry-after': String(seconds) },
        );
      }
    }
    const response = await deps.auth.handler(request);
    if (key && response.status === 401) await deps.lockout.recordFailure(key, clock(), requestId);
    if (key && response.ok) await deps.lockout.recordSuccess(key);
    return withoutTokens(response);
  };
}
