import type { SignInLockout } from '../ports/sign-in-lockout';
import { BREAK_GLASS_PREFIX, OIDC_PROVIDER_ID } from '../config/oidc';
import { lockoutKey } from '../domain/sign-in-lockout';
import { textProblem } from '../domain/text';
import { REQUEST_ID_HEADER } from '../http/request-id';
import type { KeelAuth } from './auth';

export const AUTH_BASE_PATH = '/api/auth';

/**
 * The only better-auth endpoints reachable over HTTP: what the sign-in form, the
 * sign-out button and a session check use. Everything else (admin/*, update-user,
 * change-password, list-sessions, impersonation, ...) answers 404; user changes go
 * through Keel's audited actions, and server code calls `auth.api.*` directly.
 */
export const AUTH_HTTP_ENDPOINTS = ['POST /sign-in/username', 'POST /sign-out', 'GET /get-session'] as const;

/** Mounted only when single sign-on is configured: the start of an SSO sign-in, and the provider's callback. */
export const SSO_HTTP_ENDPOINTS = ['POST /sign-in/social', `GET /callback/${OIDC_PROVIDER_ID}`] as const;

const SIGN_IN = 'POST /sign-in/username';
const SSO_START = SSO_HTTP_ENDPOINTS[0];
const SSO_CALLBACK = SSO_HTTP_ENDPOINTS[1];

export interface AuthSurfaceDeps {
  auth: KeelAuth;
  lockout: SignInLockout;
  /** Origins a sign-in may be posted from; any other (or none) is login CSRF. */
  allowedOrigins: readonly string[];
  clock?: () => Date;
  /** Single sign-on is configured: mount SSO_HTTP_ENDPOINTS. */
  sso?: boolean;
  /** False (KEEL_LOCAL_SIGN_IN=0): passwords only for break-glass usernames. Default true. */
  localSignIn?: boolean;
  /** Records a refused SSO callback in keel.audit_event (lib/adapters/sso-audit.ts). */
  recordSsoRefusal?: (code: string, requestId: string | null) => Promise<void>;
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
}

const notFound = () => json(404, { code: 'NOT_FOUND', message: 'No such endpoint.' });

/**
 * A sign-in body as JSON, read without consuming the request;
 * undefined when it is not JSON (better-auth answers that itself).
 */
async function jsonBody(request: Request): Promise<unknown> {
  try {
    return (await request.clone().json()) as unknown;
  } catch {
    return undefined;
  }
}

function typedUsername(body: unknown): string | null {
  return body && typeof body === 'object' && 'username' in body && typeof body.username === 'string'
    ? body.username
    : null;
}

/**
 * The first field of a sign-in body holding NUL, another control character or broken
 * Unicode: no username or password has one, and the username would reach the lockout
 * query, where PostgreSQL refuses NUL with an error. Answered 400 before anything runs.
 */
function badTextField(body: unknown): string | null {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return null;
  for (const [field, value] of Object.entries(body)) {
    if (typeof value === 'string' && textProblem(value) !== null) return field;
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
    const sso = deps.sso === true && (SSO_HTTP_ENDPOINTS as readonly string[]).includes(endpoint);
    if (!sso && !(AUTH_HTTP_ENDPOINTS as readonly string[]).includes(endpoint)) return notFound();
    if (endpoint === SSO_CALLBACK) return ssoCallback(request);
    if (endpoint !== SIGN_IN && endpoint !== SSO_START) return withoutTokens(await deps.auth.handler(request));

    const origin = request.headers.get('origin');
    if (!origin || !deps.allowedOrigins.includes(origin)) {
      return json(403, { code: 'FOREIGN_ORIGIN', message: 'Sign in from the console itself.' });
    }
    if (endpoint === SSO_START) return ssoStart(request);
    const requestId = request.headers.get(REQUEST_ID_HEADER);
    const body = await jsonBody(request);
    const badField = badTextField(body);
    if (badField !== null) {
      return json(400, {
        code: 'INVALID_INPUT',
        message:
          `${/^[A-Za-z]{1,32}$/.test(badField) ? `The ${badField}` : 'A field'} ` +
          'holds a control character or broken Unicode.',
      });
    }
    const typed = typedUsername(body);
    const key = typed === null ? '' : lockoutKey(typed);
    if (deps.localSignIn === false && !(typed ?? '').trim().toLowerCase().startsWith(BREAK_GLASS_PREFIX)) {
      return json(403, { code: 'LOCAL_SIGN_IN_OFF', message: 'Password sign-in is off; sign in with single sign-on.' });
    }
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

  /** Starts an SSO sign-in for Keel's one provider, back to the console's home (or the error on the sign-in page). */
  async function ssoStart(request: Request): Promise<Response> {
    const forwarded = new Request(request.url, {
      method: 'POST',
      headers: request.headers,
      body: JSON.stringify({
        provider: OIDC_PROVIDER_ID,
        callbackURL: '/',
        errorCallbackURL: '/sign-in',
        disableRedirect: true,
      }),
    });
    forwarded.headers.set('content-type', 'application/json');
    forwarded.headers.delete('content-length');
    return withoutTokens(await deps.auth.handler(forwarded));
  }

  /**
   * The provider's redirect back. better-auth checks state, PKCE, issuer, nonce and
   * the code; a refusal comes back as a redirect carrying `error`, audited here
   * (an unmapped group is audited where the groups are known, lib/auth/auth.ts).
   */
  async function ssoCallback(request: Request): Promise<Response> {
    const response = await deps.auth.handler(request);
    const location = response.headers.get('location');
    const error =
      location && URL.canParse(location, 'http://keel.invalid')
        ? new URL(location, 'http://keel.invalid').searchParams.get('error')
        : null;
    const refused = error !== null || response.status >= 400;
    if (refused && deps.recordSsoRefusal && error?.toUpperCase() !== 'NO_MAPPED_GROUP') {
      const code = (error ?? `HTTP_${response.status}`)
        .toUpperCase()
        .replace(/[^A-Z0-9]+/g, '_')
        .slice(0, 64);
      await deps.recordSsoRefusal(code, request.headers.get(REQUEST_ID_HEADER));
    }
    return response;
  }
}
