import Link from 'next/link';
import { filterProblem, type FilterWords } from '@/lib/url-state/filter-words';
import { ErrorState } from './states';

/**
 * A page reached with filters that do not parse: one sentence per filter in the page's
 * own words, a way back to the unfiltered list, and no query.
 */
export function InvalidFilters({
  issues,
  words,
  clearHref,
}: {
  issues: { path: PropertyKey[]; message: string }[];
  words: FilterWords;
  clearHref: string;
}) {
  const sentences = [...new Set(issues.map((i) => filterProblem(words, i.path.map(String).join('.'), i.message)))];
  return (
    <ErrorState
      title="These filters are not valid"
      detail={
        <>
          <ul className="list-disc space-y-0.5 pl-5" data-testid="filter-problems">
            {sentences.map((sentence) => (
              <li key={sentence}>{sentence}</li>
            ))}
          </ul>
          <Link href={clearHref} className="mt-2 inline-block font-medium underline">
            Clear the filters
          </Link>
        </>
      }
    />
  );
}
