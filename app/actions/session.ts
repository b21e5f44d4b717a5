'use server';

import { headers } from 'next/headers';
import { z } from 'zod';
import { action } from '@/lib/server/action';
import { runtime } from '@/lib/server/runtime';

/** Ends the caller's session; nextCookies() clears the cookie on the response. */
export const signOut = action(z.object({}), 'session.sign_out', async () => {
  await runtime().auth.api.signOut({ headers: await headers() });
  return { ok: true, value: null };
});
