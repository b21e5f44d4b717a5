'use client';

import { useRouter } from 'next/navigation';
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { sameOriginPath } from '@/lib/http/same-origin-path';

const MESSAGES: Record<number, string> = {
  401: 'Wrong username or password.',
  403: 'This account is disabled.',
  429: 'Too many sign-in attempts. Wait a minute and try again.',
};
const LOCKED = 'Too many failed sign-ins for this account. Wait and try again.';
const EMPTY = 'Enter your username and password.';

/**
 * Posts the password sign-in to better-auth's endpoint (rate limited and locked out in
 * lib/auth/http-surface.ts), with a plain fetch rather than better-auth's client: the
 * page needs this one request, not the client's 13 kB gzip. Null when signed in.
 */
async function signInWithPassword(
  username: string,
  password: string,
): Promise<{ status: number; code?: string; message?: string } | null> {
  let response: Response;
  try {
    response = await fetch('/api/auth/sign-in/username', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username, password }),
      credentials: 'same-origin',
    });
  } catch {
    return { status: 0, message: 'The console cannot be reached. Try again.' };
  }
  if (response.ok) return null;
  const body = (await response.json().catch(() => null)) as { code?: string; message?: string } | null;
  return { status: response.status, code: body?.code, message: body?.message };
}

export interface SignInFormProps {
  next: string;
  /** The provider's display name when single sign-on is configured. */
  ssoName?: string | null;
  /** Why the last SSO attempt was refused. */
  ssoError?: string | null;
  /** Show the username and password form (off with KEEL_LOCAL_SIGN_IN=0, except at ?break-glass). */
  passwords?: boolean;
  breakGlassLink?: boolean;
}

export function SignInForm({
  next,
  ssoName = null,
  ssoError = null,
  passwords = true,
  breakGlassLink = false,
}: SignInFormProps) {
  const router = useRouter();
  const [error, setError] = useState<string | null>(ssoError);
  const [pending, setPending] = useState(false);
  // Bumped on every refusal, so focus moves to the message even when its text is the same as before.
  const [refusals, setRefusals] = useState(0);
  const alertRef = useRef<HTMLParagraphElement>(null);
  useEffect(() => {
    // The refused form re-enabled its button; without this, focus would be left on the body.
    if (refusals > 0) alertRef.current?.focus();
  }, [refusals]);
  const refuse = (message: string) => {
    setError(message);
    setRefusals((n) => n + 1);
  };

  async function onSso() {
    setPending(true);
    setError(null);
    // The server picks the provider and where it returns (lib/auth/http-surface.ts).
    const response = await fetch('/api/auth/sign-in/social', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
      credentials: 'same-origin',
    });
    const body = (await response.json().catch(() => null)) as { url?: string; message?: string } | null;
    if (!response.ok || !body?.url) {
      setPending(false);
      refuse(response.status === 429 ? MESSAGES[429]! : (body?.message ?? 'Single sign-on is unavailable.'));
      return;
    }
    window.location.assign(body.url);
  }

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const username = String(form.get('username') ?? '');
    const password = String(form.get('password') ?? '');
    // Nothing to check yet: say what is missing, without a request (and without counting a failed sign-in).
    if (username.trim() === '' || password === '') {
      refuse(EMPTY);
      return;
    }
    setPending(true);
    setError(null);
    const failure = await signInWithPassword(username, password);
    if (failure) {
      setPending(false);
      refuse(
        failure.code === 'ACCOUNT_LOCKED' ? LOCKED : (MESSAGES[failure.status] ?? failure.message ?? 'Sign-in failed.'),
      );
      return;
    }
    // Checked again here against this page's own origin: the prop came from the URL.
    router.replace(sameOriginPath(next, window.location.origin));
    router.refresh();
  }

  const field =
    'mt-1 block w-full rounded-md border border-zinc-300 bg-white px-3 py-2 text-sm dark:border-zinc-700 ' +
    'dark:bg-zinc-950';
  const alert = error ? (
    <p ref={alertRef} role="alert" tabIndex={-1} className="text-sm text-red-700 outline-none dark:text-red-400">
      {error}
    </p>
  ) : null;
  const sso = ssoName ? (
    <div className="mt-6 space-y-3">
      <button
        type="button"
        onClick={onSso}
        disabled={pending}
        className={
          'w-full rounded-md border border-zinc-300 bg-white px-3 py-2 text-sm font-medium hover:bg-zinc-50 ' +
          'disabled:opacity-60 dark:border-zinc-700 dark:bg-zinc-950'
        }
      >
        Sign in with {ssoName}
      </button>
      {passwords ? null : alert}
      {breakGlassLink ? (
        <p className="text-xs text-zinc-500">
          <a href="/sign-in?break-glass" className="underline">
            Break-glass sign-in
          </a>{' '}
          (CLI-made emergency accounts only)
        </p>
      ) : null}
    </div>
  ) : null;
  if (!passwords) return sso;
  return (
    <>
      {sso}
      <form onSubmit={onSubmit} className="mt-6 space-y-4" noValidate>
        <div>
          <label htmlFor="username" className="block text-sm font-medium">
            Username
          </label>
          <input id="username" name="username" autoComplete="username" required className={field} />
        </div>
        <div>
          <label htmlFor="password" className="block text-sm font-medium">
            Password
          </label>
          <input
            id="password"
            name="password"
            type="password"
            autoComplete="current-password"
            required
            className={field}
          />
        </div>
        {alert}
        <button
          type="submit"
          disabled={pending}
          className={
            'w-full rounded-md bg-sky-700 px-3 py-2 text-sm font-medium text-white hover:bg-sky-800 ' +
            'disabled:opacity-60'
          }
        >
          {pending ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </>
  );
}
