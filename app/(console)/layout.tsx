import type { ReactNode } from 'react';
import { LiveUpdates } from '@/components/live/live-updates';
import { KeyboardShortcuts } from '@/components/shell/keyboard-shortcuts';
import { NavLinks } from '@/components/shell/nav-links';
import { SignOutButton } from '@/components/shell/sign-out-button';
import { ThemeToggle } from '@/components/theme-toggle';
import { requireActor } from '@/lib/server/session';

export const dynamic = 'force-dynamic';

export default async function ConsoleLayout({ children }: { children: ReactNode }) {
  const actor = await requireActor();
  return (
    <div className="flex min-h-screen">
      <nav aria-label="Main" className="w-56 shrink-0 border-r border-zinc-200 bg-white p-4 dark:border-zinc-800 dark:bg-zinc-900">
        <div className="mb-6 px-3 text-lg font-semibold tracking-tight">Keel</div>
        <NavLinks role={actor.role} />
      </nav>
      <div className="flex min-w-0 flex-1 flex-col">
        <header className="flex items-center justify-end gap-3 border-b border-zinc-200 bg-white px-6 py-3 dark:border-zinc-800 dark:bg-zinc-900">
          <span className="text-sm" data-testid="signed-in-user">
            <span className="font-medium">{actor.login}</span>{' '}
            <span className="rounded bg-zinc-100 px-1.5 py-0.5 text-xs font-medium uppercase tracking-wide text-zinc-700 dark:bg-zinc-800 dark:text-zinc-300" data-testid="signed-in-role">
              {actor.role}
            </span>
          </span>
          <span className="text-xs text-zinc-600 dark:text-zinc-400">Press <kbd className="font-mono">?</kbd> for shortcuts</span>
          <KeyboardShortcuts />
          <LiveUpdates />
          <ThemeToggle />
          <SignOutButton />
        </header>
        <main className="min-w-0 flex-1 p-6">{children}</main>
      </div>
    </div>
  );
}
