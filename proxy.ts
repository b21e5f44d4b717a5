import { getSessionCookie } from 'better-auth/cookies';
import { NextResponse, type NextRequest } from 'next/server';
import { refuseForeignServerAction, refuseMalformedPath } from './lib/http/request-guards';
import { contentSecurityPolicy, createNonce, PERMISSIONS_POLICY } from './lib/http/security-headers';

const PUBLIC_PATHS = ['/sign-in', '/api/health', '/api/auth'];

/**
 * An early, optimistic gate: without a session cookie, pages go to sign-in and the
 * API answers 401. Every page, handler and action still verifies the session itself.
 */
function gate(request: NextRequest, requestHeaders: Headers): Response {
  const { pathname } = request.nextUrl;
  const refused = refuseMalformedPath(pathname) ?? refuseForeignServerAction(request);
  if (refused) return refused;
  const pass = () => NextResponse.next({ request: { headers: requestHeaders } });
  if (PUBLIC_PATHS.some((p) => pathname === p || pathname.startsWith(`${p}/`))) return pass();
  if (getSessionCookie(request)) return pass();
  // A metrics scraper authenticates with a bearer token, which the route checks.
  if (pathname === '/api/metrics' && request.headers.get('authorization')?.startsWith('Bearer ')) return pass();
  if (pathname.startsWith('/api/')) {
    return NextResponse.json({ code: 'UNAUTHENTICATED', message: 'Sign in first.' }, { status: 401 });
  }
  const url = new URL('/sign-in', request.url);
  if (pathname !== '/') url.searchParams.set('next', pathname + request.nextUrl.search);
  return NextResponse.redirect(url);
}

/**
 * Every response gets the Content-Security-Policy with a fresh nonce; Next.js reads
 * the nonce from the request's policy header and puts it on its own scripts, and
 * the layout puts it on the theme script (docs/security.md, "Headers").
 */
export function proxy(request: NextRequest) {
  const nonce = createNonce();
  const policy = contentSecurityPolicy(nonce, process.env.NODE_ENV === 'development');
  const requestHeaders = new Headers(request.headers);
  requestHeaders.set('x-nonce', nonce);
  requestHeaders.set('content-security-policy', policy);
  const response = gate(request, requestHeaders);
  response.headers.set('content-security-policy', policy);
  response.headers.set('permissions-policy', PERMISSIONS_POLICY);
  return response;
}

export const config = {
  matcher: ['/((?!_next/static|_next/image|favicon.ico|icon.svg).*)'],
};
