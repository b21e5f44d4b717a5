'use client';

import { usernameClient } from 'better-auth/client/plugins';
import { createAuthClient } from 'better-auth/react';

/** The browser side of sign-in: it posts to /api/auth, where sign-in is rate limited. */
export const authClient = createAuthClient({ plugins: [usernameClient()] });
