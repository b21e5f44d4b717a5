import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { getSessionCookie } from 'better-auth/cookies';
import { refuseForeignServerAction, refuseMalformedPath, type GuardedRequest } from './request-guards';
import { BASELINE_HEADERS, contentSecurityPolicy, createNonce } from './security-headers';

/** Reached without a session: the sign-in page, the health check and the sign-in endpoints. */
const PUBLIC_PATHS = ['/sign-in', '/api/health', '/api/auth'];

/** Files Next.js serves as they are; next.config.ts gives them the static policy. */
const FILE_PATHS = ['/_next/image', '/favicon.ico', '/icon.svg'];
const FILE_TREE = '/_next/static/';
/** `keel dev` only: the development overlay's own endpoints, which Next.js answers itself. */
const DEVELOPMENT_PREFIX = '/__nextjs_';

const isFilePath = (pathname: string) => pathname.startsWith(FILE_TREE) || FILE_PATHS.includes(pathname);
const isPublicPath = (pathname: string) => PUBLIC_PATHS.some((path) => pathname === path || pathname.startsWith(`${path}/`));

const headerText = (value: string | string[] | undefined): string | null =>
  value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;

/** A Node request as the guards read it. */
function guardedView(method: string, headers: IncomingHttpHeaders): GuardedRequest {
  return {
    method,
    headers: { get: (name) => headerText(headers[name.toLowerCase()]), has: (name) => headers[name.toLowerCase()] !== undefined },
  };
}

/**
 * The request target as Next.js routes it: resolved against the origin, dot segments
 * removed, percent-encoding kept. Null when it does not parse.
 */
function parseTarget(target: string | undefined): URL | null {
  const raw = target ?? '/';
  try {
    return new URL(raw.startsWith('/') ? `http://localhost${raw}` : raw, 'http://localhost');
  } catch {
    return null;
  }
}

function hasSessionCookie(headers: IncomingHttpHeaders): boolean {
  const cookie = headerText(headers.cookie);
  if (!cookie) return false;
  try {
    return getSessionCookie(new Headers([['cookie', cookie]])) !== null;
  } catch {
    return false; // a value no Headers accepts carries no session better-auth would read
  }
}

/** What the front door decided: answer the request itself, or hand it on to Next.js. */
export type Admission = { kind: 'answer'; response: Response } | { kind: 'pass' };

/**
 * The early, optimistic gate, on the request as it arrived: without a session cookie,
 * pages go to sign-in and the API answers 401. Every page, handler and action still
 * verifies the session itself.
 */
export function admit(method: string, target: string | undefined, headers: IncomingHttpHeaders): Admission {
  return admitParsed(method, parseTarget(target), headers);
}

function admitParsed(method: string, url: URL | null, headers: IncomingHttpHeaders): Admission {
  if (url === null) {
    return { kind: 'answer', response: Response.json({ code: 'INVALID_INPUT', message: 'The request address does not parse.' }, { status: 400, headers: { 'Cache-Control': 'no-store' } }) };
  }
  const { pathname } = url;
  const refused = refuseMalformedPath(pathname) ?? refuseForeignServerAction(guardedView(method, headers), pathname);
  if (refused) return { kind: 'answer', response: refused };
  if (isPublicPath(pathname) || hasSessionCookie(headers)) return { kind: 'pass' };
  // A metrics scraper authenticates with a bearer token, which the route checks.
  if (pathname === '/api/metrics' && headerText(headers.authorization)?.startsWith('Bearer ')) return { kind: 'pass' };
  if (pathname.startsWith('/api/')) {
    return { kind: 'answer', response: Response.json({ code: 'UNAUTHENTICATED', message: 'Sign in first.' }, { status: 401 }) };
  }
  // `_rsc` is the client router's cache-buster, not part of the address the user was on.
  url.searchParams.delete('_rsc');
  const location = pathname === '/' ? '/sign-in' : `/sign-in?${new URLSearchParams({ next: pathname + url.search }).toString()}`;
  return { kind: 'answer', response: new Response(location, { status: 307, headers: { Location: location } }) };
}

async function send(response: ServerResponse, answer: Response, policy: string): Promise<void> {
  const body = Buffer.from(await answer.arrayBuffer());
  response.writeHead(answer.status, {
    ...BASELINE_HEADERS,
    'Content-Security-Policy': policy,
    ...Object.fromEntries(answer.headers),
    'Content-Length': String(body.byteLength),
  });
  response.end(body);
}

/**
 * Keel's HTTP server runs this on every request before Next.js sees it (lib/cli/server.mjs).
 * Pages and routes get a fresh nonce and the policy naming it: Next.js reads the nonce
 * from the request's policy header and puts it on its own scripts, and the layout reads
 * `x-nonce` for the theme script (docs/security.md, "Headers"); any copy a client sent is
 * replaced. Static files pass untouched. Returns true when it answered the request itself.
 */
export function openFrontDoor(options: { development: boolean }): (request: IncomingMessage, response: ServerResponse) => boolean {
  return (request, response) => {
    const url = parseTarget(request.url);
    if (url !== null && (isFilePath(url.pathname) || (options.development && url.pathname.startsWith(DEVELOPMENT_PREFIX)))) return false;
    const nonce = createNonce();
    const policy = contentSecurityPolicy(nonce, options.development);
    const admission = admitParsed(request.method ?? 'GET', url, request.headers);
    if (admission.kind === 'answer') {
      send(response, admission.response, policy).catch(() => response.destroy());
      return true;
    }
    request.headers['x-nonce'] = nonce;
    request.headers['content-security-policy'] = policy;
    response.setHeader('Content-Security-Policy', policy);
    return false;
  };
}
