import type { Metadata } from 'next';
import { ExecutionsView } from '@/components/executions/executions-view';
import { toQueryString } from '@/components/data/fetch-json';
import { PageHeader } from '@/components/ui/page-header';
import { InvalidFilters } from '@/components/ui/states';
import { executionFiltersSchema, listExecutions, listJobNames } from '@/lib/queries/executions';
import { page } from '@/lib/server/page';
import { runtime } from '@/lib/server/runtime';

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
  const { db, settings, ownerToken } = runtime();
  const [initial, jobNames] = await Promise.all([
    listExecutions(db, search.value, { staleThresholdMs: settings.staleThresholdMs, ownerToken }),
    listJobNames(db),
  ]);
  return (
    <>
      {header}
      <ExecutionsView initial={initial} initialKey={toQueryString(query)} jobNames={jobNames} />
    </>
  );
});
