import Link from 'next/link';

const TAB =
  'rounded-md border border-zinc-300 px-3 py-1.5 text-sm font-medium hover:bg-zinc-100 aria-[current=page]:border-zinc-900 aria-[current=page]:bg-zinc-900 aria-[current=page]:text-white dark:border-zinc-700 dark:hover:bg-zinc-800 dark:aria-[current=page]:border-zinc-100 dark:aria-[current=page]:bg-zinc-100 dark:aria-[current=page]:text-zinc-900';

/**
 * The two lists of the retry keys page as tabs: the unresolved keys, and the corrupt
 * envelopes, which no longer wait below a hundred keys. `corruptCount` is the first
 * page's; `more` says there are further pages.
 */
export function RetryKeyTabs({ show, keysHref, corruptHref, corruptCount, more }: { show: 'keys' | 'corrupt'; keysHref: string; corruptHref: string; corruptCount: number; more: boolean }) {
  return (
    <nav aria-label="Retry key lists" className="mb-4 flex flex-wrap gap-2">
      <Link href={keysHref} aria-current={show === 'keys' ? 'page' : undefined} className={TAB}>
        Unresolved keys
      </Link>
      <Link href={corruptHref} aria-current={show === 'corrupt' ? 'page' : undefined} className={TAB}>
        Corrupt envelopes ({corruptCount}
        {more ? '+' : ''})
      </Link>
    </nav>
  );
}
