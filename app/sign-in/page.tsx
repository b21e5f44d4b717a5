import type { Metadata } from 'next';
import { redirect } from 'next/navigation';
import { SignInForm } from '@/components/sign-in-form';
import { sameOriginPath } from '@/lib/http/same-origin-path';
import { runtime } from '@/lib/server/composition-root';
import { currentActor } from '@/lib/server/session';

export const metadata: Metadata = { title: 'Sign in' };
export const dynamic = 'force-dynamic';

/** Why an SSO sign-in came back refused (the `error` better-auth puts on the redirect). */
function ssoErrorMessage(code: string | undefined): string | null {
  if (!code) return null;
  const upper = code.toUpperCase();
  if (upper === 'NO_MAPPED_GROUP')
    return (
      'Your account at the identity provider is in no group that gives access to Keel. ' +
      'Ask an administrator to add you to one.'
    );
  if (upper === 'GROUPS_OVERAGE')
    return (
      'The identity provider did not send your groups: you are in more groups than its sign-in token can carry. ' +
      'Ask an administrator to send Keel only the groups assigned to it.'
    );
  if (upper === 'BANNED' || upper === 'BANNED_USER') return 'This account is disabled.';
  return 'Single sign-on failed. Try again; if it keeps failing, ask an administrator.';
}

export default async function SignInPage({
  searchParams,
}: {
  searchParams: Promise<{ next?: string; error?: string; 'break-glass'?: string }>;
}) {
  const params = await searchParams;
  const { next } = params;
  const target = sameOriginPath(typeof next === 'string' ? next : undefined);
  if (await currentActor()) redirect(target);
  const { signIn } = runtime().settings;
  const ssoName = signIn.oidc?.name ?? null;
  const showPasswords = signIn.localSignIn || params['break-glass'] !== undefined;
  return (
    <main className="flex min-h-screen items-center justify-center p-6">
      <div
        className={
          'w-full max-w-sm rounded-xl border border-zinc-200 bg-white p-8 shadow-sm dark:border-zinc-800 ' +
          'dark:bg-zinc-900'
        }
      >
        <h1 className="text-xl font-semibold">Sign in to Keel</h1>
        <p className="mt-1 text-sm text-zinc-600 dark:text-zinc-400">
          Operations console for batch and settlement runtimes.
        </p>
        <SignInForm
          next={target}
          ssoName={ssoName}
          ssoError={ssoErrorMessage(typeof params.error === 'string' ? params.error : undefined)}
          passwords={showPasswords}
          breakGlassLink={!signIn.localSignIn && !showPasswords}
        />
      </div>
    </main>
  );
}
