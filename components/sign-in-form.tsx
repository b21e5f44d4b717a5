'use client';

import { useRouter } from 'next/navigation';
import { useState, type FormEvent } from 'react';
import { sameOriginPath } from '@/lib/http/same-origin-path';
import { authClient } from './auth-client';

const MESSAGES: Record<number, string> = {
  401: 'Wrong username or password.',
  403: 'This account is disabled.',
  429: 'Too many sign-in attempts. Wait a minute and try again.',
};
const LOCKED = 'Too many failed sign-ins for this account. Wait and try again.';

export function SignInForm({ next }: { next: string }) {
  const router = useRouter();
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setPending(true);
    setError(null);
    const { error: failure } = await authClient.signIn.username({
      username: String(form.get('username') ?? ''),
      password: String(form.get('password') ?? ''),
    });
    if (failure) {
      setPending(false);
      setError(failure.code === 'ACCOUNT_LOCKED' ? LOCKED : (MESSAGES[failure.status] ?? failure.message ?? 'Sign-in failed.'));
      return;
    }
    // Checked again here against this page's own origin: the prop came from the URL.
    router.replace(sameOriginPath(next, window.location.origin));
    router.refresh();
  }

  const field =
    'mt-1 block w-full rounded-md border border-zinc-300 bg-white px-3 py-2 text-sm dark:border-zinc-700 dark:bg-zinc-950';
  return (
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
        <input id="password" name="password" type="password" autoComplete="current-password" required className={field} />
      </div>
      {error ? (
        <p role="alert" className="text-sm text-red-700 dark:text-red-400">
          {error}
        </p>
      ) : null}
      <button
        type="submit"
        disabled={pending}
        className="w-full rounded-md bg-sky-700 px-3 py-2 text-sm font-medium text-white hover:bg-sky-800 disabled:opacity-60"
      >
        {pending ? 'Signing in…' : 'Sign in'}
      </button>
    </form>
  );
}
