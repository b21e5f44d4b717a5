import type { Metadata } from 'next';
import { Prefetched } from '@/components/data/prefetched';
import { SearchResultsView } from '@/components/search/search-results';
import { PageHeader } from '@/components/ui/page-header';
import { readForPage } from '@/lib/reads/define-read';
import { searchResults } from '@/lib/reads/search';
import { page } from '@/lib/server/page';
import { loadSearchState } from '@/lib/url-state/search';

export const metadata: Metadata = { title: 'Search' };

// An invalid or missing text is not prefetched: the view shows the API's answer naming the problem.
export default page('read', {}, async function SearchPage({ actor, query }) {
  const results = await readForPage(searchResults, actor, { q: loadSearchState(query).q?.trim() }, query);
  return (
    <>
      <PageHeader
        title="Search"
        description={
          'Executions, job instances, receipts, retry keys, recovery proposals, operations and users, ' +
          'found by their ids.'
        }
      />
      <Prefetched queries={results.ok ? [results.prefetch] : []}>
        <SearchResultsView />
      </Prefetched>
    </>
  );
});
