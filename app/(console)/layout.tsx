import type { ReactNode } from 'react';
import { LiveUpdates } from '@/components/live/live-updates';
import { ConsoleShell } from '@/components/shell/console-shell';
import { KeyboardShortcuts } from '@/components/shell/keyboard-shortcuts';
import { NavLinks } from '@/components/shell/nav-links';
import { ShortcutList } from '@/components/shell/shortcut-list';
import { SignOutButton } from '@/components/shell/sign-out-button';
import { TimeZoneLink } from '@/components/shell/time-zone-link';
import { ThemeToggle } from '@/components/theme-toggle';
import { TimeZoneProvider } from '@/components/ui/time-zone';
import { requireActor } from '@/lib/server/session';
import { currentTimeZone } from '@/lib/server/time-zone';

export const dynamic = 'force-dynamic';

export default async function ConsoleLayout({ children }: { children: ReactNode }) {
  const actor = await requireActor();
  const timeZone = await currentTimeZone(actor);
  const shell = (
    <ConsoleShell
      nav={<NavLinks role={actor.role} />}
      header={
        <>
          <span className="text-sm" data-testid="signed-in-user">
            <span className="font-medium">{actor.login}</span>{' '}
            <span
              className={
                'rounded bg-zinc-100 px-1.5 py-0.5 text-xs font-medium uppercase tracking-wide text-zinc-700 ' +
                'dark:bg-zinc-800 dark:text-zinc-300'
              }
              data-testid="signed-in-role"
            >
              {actor.role}
            </span>
          </span>
          <span className="hidden text-xs text-zinc-600 lg:inline dark:text-zinc-400">
            Press <kbd className="font-mono">?</kbd> for shortcuts
          </span>
          <KeyboardShortcuts>
            <ShortcutList />
          </KeyboardShortcuts>
          <LiveUpdates userId={actor.id} />
          <TimeZoneLink />
          <ThemeToggle />
          <SignOutButton />
        </>
      }
    >
      {children}
    </ConsoleShell>
  );
  // Every time on the page is shown in the user's zone, rendered so on the server (components/ui/time-zone.tsx).
  return (
    <TimeZoneProvider preference={timeZone.preference} zone={timeZone.zone}>
      {shell}
    </TimeZoneProvider>
  );
}
