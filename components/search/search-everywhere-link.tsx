import Link from 'next/link';
import { searchPageHref } from '@/lib/url-state/search';

/**
 * For a list whose own search takes one kind of id: what was typed may be another kind
 * (a receipt id pasted into the executions search), so offer the console-wide search.
 */
export function SearchEverywhereLink({ text }: { text: string }) {
  return (
    <p className="text-sm">
      <Link
        href={searchPageHref(text)}
        className="font-medium text-sky-800 underline [overflow-wrap:anywhere] dark:text-sky-300"
      >
        Search everywhere for “{text}”
      </Link>
    </p>
  );
}
