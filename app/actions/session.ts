'use server';

import { headers } from 'next/headers';
import { z } from 'zod';
import { signOutSession } from '@/lib/auth/auth';
import { action } from '@/lib/server/action';
import { runtime } from '@/lib/server/composition-root';

/**
 * Ends the caller's session; nextCookies() clears the cookie on the response. A single
 * sign-on user's provider session is ended by the browser at the returned URL, if any.
 */
export const signOut = action(z.object({}), 'session.sign_out', async () => {
  const { settings, auth } = runtime();
  const signedOut = await signOutSession(auth, await headers(), {
    port: settings.port,
    baseUrl: settings.baseUrl,
    oidc: settings.signIn.oidc,
  });
  return { ok: true, value: signedOut };
});
