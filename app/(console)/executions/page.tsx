import type { Metadata } from 'next';
import { Prefetched } from '@/components/data/prefetched';
import { ExecutionsView } from '@/components/executions/executions-view';
import { PageHeader } from '@/components/ui/page-header';
import { InvalidFilters } from '@/components/ui/invalid-filters';
import { executionFiltersSchema } from '@/lib/queries/executions';
import { queryKeys } from '@/lib/query-keys';
import { executionsPage, jobNames } from '@/lib/server/console-reads';
import { page } from '@/lib/server/page';
import { loadExecutionsSearch } from '@/lib/url-state/executions';
import { EXECUTION_FILTER_WORDS } from '@/lib/url-state/executions';

export const metadata: Metadata = { title: 'Executions' };

export default page('read', { search: executionFiltersSchema }, async function ExecutionsPage({ query, search }) {
  const header = (
    <PageHeader
      title="Executions"
      description="Job executions of the oxide-batch runtime, most recently updated first."
    />
  );
  if (!search.ok) {
    return (
      <>
        {header}
        <InvalidFilters issues={search.issues} words={EXECUTION_FILTER_WORDS} clearHref="/executions" />
      </>
    );
  }
  return (
    <>
      {header}
      <Prefetched
        queries={[
          {
            queryKey: queryKeys.executions.list(loadExecutionsSearch(query)),
            queryFn: () => executionsPage(search.value),
          },
          { queryKey: queryKeys.jobNames(), queryFn: jobNames },
        ]}
      >
        <ExecutionsView />
      </Prefetched>
    </>
  );
});
