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
      '<body><main><h1>Invalid address</h1><p>This address holds malformed percent-encoding or characters that are not valid text.</p>' +
      '<p><a href="/">Go to the overview</a></p></main></body></html>',
    { status: 400, headers: { ...NO_STORE, 'Content-Type': 'text/html; charset=utf-8' } },
  );
}

/**
 * What Next.js takes for a server action: a POST naming one (Next-Action), or a
 * multipart form posted to a page, as a form without JavaScript sends it. Route
 * handlers under /api are not pages.
 */
function mayBeServerAction(request: GuardedRequest, pathname: string): boolean {
  if (request.method !== 'POST') return false;
  if (request.headers.has('next-action')) return true;
  return !pathname.startsWith('/api/') && (request.headers.get('content-type')?.startsWith('multipart/form-data') ?? false);
}

/**
 * A server action posted from another origin. Next.js refuses it too, but by
 * throwing, which answers 500 and logs an error; this answers 403. Same rule as
 * Next.js: the Origin's host must be the request's host (X-Forwarded-Host first, as
 * Next.js reads it); a request without Origin is left to Next.js.
 */
export function refuseForeignServerAction(request: GuardedRequest, pathname: string): Response | null {
  if (!mayBeServerAction(request, pathname)) return null;
  const origin = request.headers.get('origin');
  if (origin === null) return null;
  const host = request.headers.get('x-forwarded-host')?.split(',')[0]?.trim() || request.headers.get('host');
  let originHost: string | null;
  try {
    originHost = new URL(origin).host;
  } catch {
    originHost = null; // "null" (a sandboxed frame) or garbage
  }
  if (originHost !== null && host !== null && originHost.toLowerCase() === host.toLowerCase()) return null;
  return Response.json({ code: 'FORBIDDEN', message: 'Server actions are accepted only from this console’s own pages.' }, { status: 403, headers: NO_STORE });
}
