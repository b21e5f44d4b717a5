import { expect } from 'vitest';
import type { KeelAuth } from '../../lib/auth/auth';
import { CLIENT_ADDRESS_HEADER } from '../../lib/http/client-address';

/**
 * Signs `username` in through better-auth's own handler, as a browser on `http://localhost:<port>` at
 * `clientAddress`; expects it to succeed and returns the cookies it set as one Cookie header.
 */
export async function signInCookie(
  auth: KeelAuth,
  {
    port,
    clientAddress,
    username,
    password,
  }: { port: number; clientAddress: string; username: string; password: string },
): Promise<string> {
  const response = await auth.handler(
    new Request(`http://localhost:${port}/api/auth/sign-in/username`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        origin: `http://localhost:${port}`,
        [CLIENT_ADDRESS_HEADER]: clientAddress,
      },
      body: JSON.stringify({ username, password }),
    }),
  );
  expect(response.status).toBe(200);
  return response.headers
    .getSetCookie()
    .map((cookie) => cookie.split(';')[0])
    .join('; ');
}

/** The session token in a Cookie header: the session cookie's value before its signature. */
export const sessionTokenOf = (cookie: string) =>
  decodeURIComponent(cookie.split('better-auth.session_token=')[1]!.split(';')[0]!).split('.')[0]!;
