'use client';

import Link from 'next/link';
import { usePathname, useSearchParams } from 'next/navigation';
import { formatCappedCount, type CappedCount } from '@/lib/domain/capped-count';
import type { QueueState } from '@/lib/queries/settlements-types';
import { FILTER_KEYS } from '@/lib/queries/settlements-filter-types';

type Tab = { key: QueueState | 'all' | 'dead_lettered' | 'bulk'; label: string; path: string; state?: string };

const TABS: Tab[] = [
  { key: 'due', label: 'Due', path: '/settlements', state: 'due' },
  { key: 'leased', label: 'Leased', path: '/settlements', state: 'leased' },
  { key: 'retry_scheduled', label: 'Retry scheduled', path: '/settlements', state: 'retry_scheduled' },
  { key: 'all', label: 'All queued', path: '/settlements', state: 'all' },
  { key: 'dead_lettered', label: 'Dead letters', path: '/settlements/dead-letters' },
  { key: 'bulk', label: 'Bulk replays', path: '/settlements/bulk' },
];

const TAB =
  'rounded-md border border-zinc-300 px-3 py-1.5 text-sm font-medium hover:bg-zinc-100 ' +
  'aria-[current=page]:border-zinc-900 aria-[current=page]:bg-zinc-900 aria-[current=page]:text-white ' +
  'dark:border-zinc-700 dark:hover:bg-zinc-800 dark:aria-[current=page]:border-zinc-100 ' +
  'dark:aria-[current=page]:bg-zinc-100 dark:aria-[current=page]:text-zinc-900';

/**
 * The settlement views as one row of tabs: the queue by state, the dead letters and the
 * bulk replay jobs. The filters a queue or dead-letter tab is opened with carry over
 * (both lists share them); `counts` come from the view that knows them, when it does.
 * `queueState`: the state the queue view is showing.
 */
export function SettlementTabs({
  counts,
  queueState,
}: {
  counts?: Partial<Record<QueueState | 'dead_lettered', CappedCount>>;
  queueState?: string;
}) {
  const pathname = usePathname();
  const search = useSearchParams();
  const filters = new URLSearchParams();
  for (const key of FILTER_KEYS) {
    const value = search.get(key);
    if (value) filters.set(key, value);
  }
  const href = (tab: Tab) => {
    if (tab.key === 'bulk') return tab.path;
    const query = new URLSearchParams(filters);
    if (tab.state) query.set('state', tab.state);
    return query.size ? `${tab.path}?${query}` : tab.path;
  };
  const current = (tab: Tab) =>
    tab.path === '/settlements'
      ? pathname === '/settlements' && (queueState ?? 'due') === tab.state
      : pathname.startsWith(tab.path);
  return (
    <nav aria-label="Settlement views" className="mb-4 flex flex-wrap gap-2">
      {TABS.map((tab) => {
        const count = tab.key === 'all' || tab.key === 'bulk' ? undefined : counts?.[tab.key];
        return (
          <Link key={tab.key} href={href(tab)} aria-current={current(tab) ? 'page' : undefined} className={TAB}>
            {tab.label}
            {count ? <span className="tabular-nums">{` (${formatCappedCount(count)})`}</span> : null}
          </Link>
        );
      })}
    </nav>
  );
}
