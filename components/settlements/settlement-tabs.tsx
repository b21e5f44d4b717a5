'use client';

import Link from 'next/link';
import { usePathname } from 'next/navigation';

const TABS = [
  { href: '/settlements', label: 'Queue' },
  { href: '/settlements/dead-letters', label: 'Dead letters' },
  { href: '/settlements/bulk', label: 'Bulk replays' },
];

const TAB =
  'rounded-md border border-zinc-300 px-3 py-1.5 text-sm font-medium hover:bg-zinc-100 aria-[current=page]:border-zinc-900 aria-[current=page]:bg-zinc-900 aria-[current=page]:text-white dark:border-zinc-700 dark:hover:bg-zinc-800 dark:aria-[current=page]:border-zinc-100 dark:aria-[current=page]:bg-zinc-100 dark:aria-[current=page]:text-zinc-900';

/** The settlement views: the queue, the dead letters, and the bulk replay jobs. */
export function SettlementTabs() {
  const pathname = usePathname();
  const current = (href: string) => (href === '/settlements' ? pathname === href : pathname.startsWith(href));
  return (
    <nav aria-label="Settlement views" className="mb-4 flex flex-wrap gap-2">
      {TABS.map((tab) => (
        <Link key={tab.href} href={tab.href} aria-current={current(tab.href) ? 'page' : undefined} className={TAB}>
          {tab.label}
        </Link>
      ))}
    </nav>
  );
}
