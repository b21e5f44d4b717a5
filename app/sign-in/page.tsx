import type { Metadata } from 'next';
import { redirect } from 'next/navigation';
import { SignInForm } from '@/components/sign-in-form';
import { sameOriginPath } from '@/lib/http/same-origin-path';
import { currentActor } from '@/lib/server/session';

export const metadata: Metadata = { title: 'Sign in' };
export const dynamic = 'force-dynamic';

export default async function SignInPage({ searchParams }: { searchParams: Promise<{ next?: string }> }) {
  const { next } = await searchParams;
  const target = sameOriginPath(typeof next === 'string' ? next : undefined);
  if (await currentActor()) redirect(target);
  return (
    <main className="flex min-h-screen items-center justify-center p-6">
      <div className="w-full max-w-sm rounded-xl border border-zinc-200 bg-white p-8 shadow-sm dark:border-zinc-800 dark:bg-zinc-900">
        <h1 className="text-xl font-semibold">Sign in to Keel</h1>
        <p className="mt-1 text-sm text-zinc-600 dark:text-zinc-400">Operations console for batch and settlement runtimes.</p>
        <SignInForm next={target} />
      </div>
    </main>
  );
}
