import { postgresSignInLockout } from '@/lib/adapters/sign-in-lockout';
import { postgresSsoRefusals } from '@/lib/adapters/sso-audit';
import { consoleOrigins } from '@/lib/auth/auth';
import { createAuthSurface } from '@/lib/auth/http-surface';
import { runtime } from '@/lib/server/runtime';

export const dynamic = 'force-dynamic';

let surface: ((request: Request) => Promise<Response>) | undefined;

/** Only sign-in (password, or SSO's start and callback), sign-out and get-session reach better-auth; every other path answers 404. */
function handle(request: Request): Promise<Response> {
  if (!surface) {
    const { auth, db, settings } = runtime();
    surface = createAuthSurface({
      auth,
      lockout: postgresSignInLockout(db),
      allowedOrigins: consoleOrigins(settings),
      sso: settings.signIn.oidc !== undefined,
      localSignIn: settings.signIn.localSignIn,
      recordSsoRefusal: postgresSsoRefusals(db),
    });
  }
  return surface(request);
}

export { handle as GET, handle as POST, handle as PUT, handle as PATCH, handle as DELETE };
