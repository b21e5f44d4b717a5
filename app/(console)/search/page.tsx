import type { Metadata } from 'next';
import { Prefetched } from '@/components/data/prefetched';
import { SearchResultsView } from '@/components/search/search-results';
import { PageHeader } from '@/components/ui/page-header';
import { searchPlan, searchQuerySchema } from '@/lib/domain/search';
import { searchEverything } from '@/lib/queries/search';
import { queryKeys } from '@/lib/query-keys';
import { page } from '@/lib/server/page';
import { listDb } from '@/lib/server/read-source';

export const metadata: Metadata = { title: 'Search' };

// An invalid or missing text is not prefetched: the view shows the API's answer naming the problem.
export default page('read', { search: searchQuerySchema }, async function SearchPage({ actor, search }) {
  const queries = search.ok
    ? [
        {
          queryKey: queryKeys.search(search.value.q),
          queryFn: async () => searchEverything(await listDb(), search.value.q, searchPlan(search.value.q, actor.role)),
        },
      ]
    : [];
  return (
    <>
      <PageHeader
        title="Search"
        description="Executions, job instances, receipts, retry keys, recovery proposals, operations and users, found by their ids."
      />
      <Prefetched queries={queries}>
        <SearchResultsView />
      </Prefetched>
    </>
  );
});
