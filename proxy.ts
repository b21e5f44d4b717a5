import { getSessionCookie } from 'better-auth/cookies';
import { NextResponse, type NextRequest } from 'next/server';
import { refuseForeignServerAction, refuseMalformedPath } from './lib/http/request-guards';

const PUBLIC_PATHS = ['/sign-in', '/api/health', '/api/auth'];

/**
 * An early, optimistic gate: without a session cookie, pages go to sign-in and the
 * API answers 401. Every page, handler and action still verifies the session itself.
 */
export function proxy(request: NextRequest) {
  const { pathname } = request.nextUrl;
  const refused = refuseMalformedPath(pathname) ?? refuseForeignServerAction(request);
  if (refused) return refused;
  if (PUBLIC_PATHS.some((p) => pathname === p || pathname.startsWith(`${p}/`))) return NextResponse.next();
  if (getSessionCookie(request)) return NextResponse.next();
  // A metrics scraper authenticates with a bearer token, which the route checks.
  if (pathname === '/api/metrics' && request.headers.get('authorization')?.startsWith('Bearer ')) return NextResponse.next();
  if (pathname.startsWith('/api/')) {
    return NextResponse.json({ code: 'UNAUTHENTICATED', message: 'Sign in first.' }, { status: 401 });
  }
  const url = new URL('/sign-in', request.url);
  if (pathname !== '/') url.searchParams.set('next', pathname + request.nextUrl.search);
  return NextResponse.redirect(url);
}

export const config = {
  matcher: ['/((?!_next/static|_next/image|favicon.ico|icon.svg).*)'],
};
