import { malformedPathSegment } from '../domain/path-segment';

/**
 * Checks the front door (front-door.ts) makes before Next.js routes a request. Each
 * answers the request itself (a Response) or lets it pass (null). They import nothing
 * from Next, so the front door stays a list of calls.
 */

const NO_STORE = { 'Cache-Control': 'no-store' };

/** What the guards read of a request: a web `Request`, or a Node request as the front door sees it. */
export interface GuardedRequest {
  readonly method: string;
  readonly headers: { get(name: string): string | null; has(name: string): boolean };
}

/**
 * A path segment that does not decode (`%ZZ`, a cut `%E0%A4%A`) or decodes to NUL,
 * another control or a lone surrogate: Next.js would fail decoding it with a 500, so
 * it is answered here as bad input.
 */
export function refuseMalformedPath(pathname: string): Response | null {
  const problem = malformedPathSegment(pathname);
  if (!problem) return null;
  if (pathname.startsWith('/api/')) {
    return Response.json({ code: 'INVALID_INPUT', message: problem.message }, { status: 400, headers: NO_STORE });
  }
  return new Response(
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Invalid address · Keel</title></head>' +
      '<body><main><h1>Invalid address</h1>' +
      '<p>This address holds malformed percent-encoding or characters that are not valid text.</p>' +
      '<p><a href="/">Go to the overview</a></p></main></body></html>',
    { status: 400, headers: { ...NO_STORE, 'Content-Type': 'text/html; charset=utf-8' } },
  );
}

/** Methods that change nothing: the only ones answered without an Origin check. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * A method the path does not answer: 405 with the methods it does (route-methods.ts).
 * Next.js would answer an unknown method (TRACE, PROPFIND) with 500, and a known one a
 * handler does not export with 405 but no `Allow`.
 */
export function refuseMethod(method: string, allowed: readonly string[]): Response | null {
  if (allowed.includes(method)) return null;
  return Response.json(
    { code: 'METHOD_NOT_ALLOWED', message: `${method.slice(0, 32)} is not answered here; use ${allowed.join(', ')}.` },
    { status: 405, headers: { ...NO_STORE, Allow: allowed.join(', ') } },
  );
}

/**
 * A POST to a page that names no server action. Keel's pages take no form posts (every
 * form calls an action from script); Next.js would try to decode such a body as a
 * form's action and answer a malformed one with 500.
 */
export function refusePagePost(request: GuardedRequest, pathname: string): Response | null {
  if (
    request.method !== 'POST' ||
    pathname === '/api' ||
    pathname.startsWith('/api/') ||
    request.headers.has('next-action')
  )
    return null;
  return Response.json(
    { code: 'INVALID_INPUT', message: 'A page takes no form posts: Keel\u2019s forms call server actions.' },
    { status: 400, headers: NO_STORE },
  );
}

/**
 * The origin exactly as a browser serializes it (scheme, host and
 * port), or null for `null` and anything that does not parse.
 */
function serializedOrigin(value: string): string | null {
  if (!URL.canParse(value)) return null;
  const origin = new URL(value).origin;
  return origin === 'null' || origin.toLowerCase() !== value.toLowerCase() ? null : origin.toLowerCase();
}

/**
 * A state-changing request (any method but GET, HEAD and OPTIONS: server actions,
 * sign-in, sign-out) from anywhere but the console's own origin. The Origin must be one
 * of `origins`, compared on scheme, host and port (Next.js compares the host only, so
 * an `https://` page could post to an `http://` console); a request without one is
 * accepted only when the browser says it is same-origin (`Sec-Fetch-Site`).
 */
export function refuseForeignOrigin(request: GuardedRequest, origins: readonly string[]): Response | null {
  if (SAFE_METHODS.has(request.method)) return null;
  const origin = request.headers.get('origin');
  if (origin === null) {
    if (request.headers.get('sec-fetch-site') === 'same-origin') return null;
  } else {
    const seen = serializedOrigin(origin);
    if (seen !== null && origins.some((allowed) => allowed.toLowerCase() === seen)) return null;
  }
  return Response.json(
    {
      code: 'FORBIDDEN',
      message:
        origin === null
          ? 'A change must say where it comes from (Origin).'
          : 'Changes are accepted only from this console\u2019s own pages.',
    },
    { status: 403, headers: NO_STORE },
  );
}
