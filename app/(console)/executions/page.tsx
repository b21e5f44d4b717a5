import type { Metadata } from 'next';
import { Prefetched } from '@/components/data/prefetched';
import { ExecutionsView } from '@/components/executions/executions-view';
import { PageHeader } from '@/components/ui/page-header';
import { InvalidFilters } from '@/components/ui/states';
import { executionFiltersSchema, listExecutions } from '@/lib/queries/executions';
import { queryKeys } from '@/lib/query-keys';
import { jobNames } from '@/lib/server/console-reads';
import { page } from '@/lib/server/page';
import { runtime } from '@/lib/server/runtime';
import { loadExecutionsSearch } from '@/lib/url-state/executions';
import { listDb } from '@/lib/server/read-source';

export const metadata: Metadata = { title: 'Executions' };

export default page('read', { search: executionFiltersSchema }, async function ExecutionsPage({ query, search }) {
  const header = <PageHeader title="Executions" description="Job executions of the oxide-batch runtime, most recently updated first." />;
  if (!search.ok) {
    return (
      <>
        {header}
        <InvalidFilters issues={search.issues} />
      </>
    );
  }
  const { settings, ownerToken } = runtime();
  const db = await listDb();
  return (
    <>
      {header}
      <Prefetched
        queries={[
          {
            queryKey: queryKeys.executions.list(loadExecutionsSearch(query)),
            queryFn: () => listExecutions(db, search.value, { staleThresholdMs: settings.staleThresholdMs, ownerToken }),
          },
          { queryKey: queryKeys.jobNames(), queryFn: jobNames },
        ]}
      >
        <ExecutionsView />
      </Prefetched>
    </>
  );
});
