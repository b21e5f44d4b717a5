'use client';

import { usePathname } from 'next/navigation';
import { useEffect, useRef, useState, type ReactNode } from 'react';
import { Providers } from '../providers';
import { SearchBox } from './search-box';

/**
 * The console's frame. From the md breakpoint (768 px) up the main navigation is a
 * sidebar; below it the navigation folds behind a Menu button (a disclosure with
 * aria-expanded) and opens under the header, so a phone-width page never scrolls
 * sideways. Escape or following a link folds it again.
 *
 * The header holds the search that finds anything by its id (search-box.tsx).
 *
 * It also holds the console's client providers (TanStack Query, nuqs, toasts): only the
 * console's pages use them, so the sign-in page does not download them.
 */
export function ConsoleShell({ nav, header, children }: { nav: ReactNode; header: ReactNode; children: ReactNode }) {
  const [open, setOpen] = useState(false);
  const pathname = usePathname();
  const button = useRef<HTMLButtonElement>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the menu closes whenever the path changes
  useEffect(() => setOpen(false), [pathname]);
  return (
    <Providers>
      <div className="min-h-screen md:grid md:grid-cols-[14rem_minmax(0,1fr)] md:grid-rows-[auto_1fr]">
        <header
          className={
            'flex flex-wrap items-center justify-end gap-x-3 gap-y-2 border-b border-zinc-200 bg-white px-4 py-3 ' +
            'md:col-start-2 md:row-start-1 md:px-6 dark:border-zinc-800 dark:bg-zinc-900'
          }
        >
          <button
            ref={button}
            type="button"
            aria-expanded={open}
            aria-controls="main-navigation"
            onClick={() => setOpen((o) => !o)}
            className={
              'mr-auto inline-flex items-center gap-2 rounded-md border border-zinc-300 px-2.5 py-1 text-sm ' +
              'font-medium hover:bg-zinc-100 md:hidden dark:border-zinc-700 dark:hover:bg-zinc-800'
            }
          >
            <svg
              aria-hidden
              viewBox="0 0 16 16"
              className="h-4 w-4"
              fill="none"
              stroke="currentColor"
              strokeWidth="1.5"
            >
              <path d={open ? 'M3.5 3.5l9 9M12.5 3.5l-9 9' : 'M2 4h12M2 8h12M2 12h12'} />
            </svg>
            Menu
          </button>
          <SearchBox className="order-last w-full md:order-first md:mr-auto md:w-80" />
          {header}
        </header>
        <nav
          id="main-navigation"
          aria-label="Main"
          onKeyDown={(event) => {
            if (event.key === 'Escape' && open) {
              setOpen(false);
              button.current?.focus();
            }
          }}
          className={
            `${open ? 'block' : 'hidden'} border-b border-zinc-200 bg-white p-4 md:col-start-1 ` +
            `md:row-span-2 md:row-start-1 md:block md:border-r md:border-b-0 dark:border-zinc-800 dark:bg-zinc-900`
          }
        >
          <div className="mb-6 hidden px-3 text-lg font-semibold tracking-tight md:block">Keel</div>
          {nav}
        </nav>
        <main className="min-w-0 p-4 md:col-start-2 md:row-start-2 md:p-6">{children}</main>
      </div>
    </Providers>
  );
}
