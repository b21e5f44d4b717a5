import { consoleOrigins } from '@/lib/auth/auth';
import { createAuthSurface } from '@/lib/auth/http-surface';
import { runtime } from '@/lib/server/composition-root';
import { authSurfacePorts } from '@/lib/server/composition-root';

export const dynamic = 'force-dynamic';

let surface: ((request: Request) => Promise<Response>) | undefined;

/**
 * Only sign-in (password, or SSO's start and callback), sign-out
 * and get-session reach better-auth; every other path answers 404.
 */
function handle(request: Request): Promise<Response> {
  if (!surface) {
    const { auth, settings } = runtime();
    const { lockout, recordSsoRefusal } = authSurfacePorts();
    surface = createAuthSurface({
      auth,
      lockout,
      allowedOrigins: consoleOrigins(settings),
      sso: settings.signIn.oidc !== undefined,
      localSignIn: settings.signIn.localSignIn,
      recordSsoRefusal,
    });
  }
  return surface(request);
}

// Only what AUTH_HTTP_ENDPOINTS and SSO_HTTP_ENDPOINTS use; the front door answers any other method 405.
export { handle as GET, handle as POST };
