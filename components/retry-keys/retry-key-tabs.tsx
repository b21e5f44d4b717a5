import Link from 'next/link';

const TAB =
  'rounded-md border border-zinc-300 px-3 py-1.5 text-sm font-medium hover:bg-zinc-100 ' +
  'aria-[current=page]:border-zinc-900 aria-[current=page]:bg-zinc-900 aria-[current=page]:text-white ' +
  'dark:border-zinc-700 dark:hover:bg-zinc-800 dark:aria-[current=page]:border-zinc-100 ' +
  'dark:aria-[current=page]:bg-zinc-100 dark:aria-[current=page]:text-zinc-900';

/**
 * The two lists of the retry keys page as tabs: the unresolved keys, and the corrupt
 * envelopes, which no longer wait below a hundred keys. `corrupt.count` is the first
 * page's, `corrupt.more` says there are further pages; null while it loads (the keys
 * tab's page does not wait for that walk), and the label keeps the count's room meanwhile.
 */
export function RetryKeyTabs({
  show,
  keysHref,
  corruptHref,
  corrupt,
}: {
  show: 'keys' | 'corrupt';
  keysHref: string;
  corruptHref: string;
  corrupt: { count: number; more: boolean } | null;
}) {
  return (
    <nav aria-label="Retry key lists" className="mb-4 flex flex-wrap gap-2">
      <Link href={keysHref} aria-current={show === 'keys' ? 'page' : undefined} className={TAB}>
        Unresolved keys
      </Link>
      <Link href={corruptHref} aria-current={show === 'corrupt' ? 'page' : undefined} className={TAB}>
        Corrupt envelopes{' '}
        <span className="inline-block min-w-[5ch] tabular-nums">
          {corrupt ? (
            `(${corrupt.count}${corrupt.more ? '+' : ''})`
          ) : (
            <span aria-hidden="true" className="text-zinc-400">
              (…)
            </span>
          )}
        </span>
      </Link>
    </nav>
  );
}
