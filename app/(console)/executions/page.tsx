import type { Metadata } from 'next';
import { Prefetched } from '@/components/data/prefetched';
import { ExecutionsView } from '@/components/executions/executions-view';
import { PageHeader } from '@/components/ui/page-header';
import { InvalidFilters } from '@/components/ui/invalid-filters';
import { readForPage } from '@/lib/reads/define-read';
import { executionList, jobNames } from '@/lib/reads/executions';
import { page } from '@/lib/server/page';
import { EXECUTION_FILTER_WORDS, loadExecutionsSearch } from '@/lib/url-state/executions';

export const metadata: Metadata = { title: 'Executions' };

export default page('read', {}, async function ExecutionsPage({ actor, query }) {
  const header = (
    <PageHeader
      title="Executions"
      description="Job executions of the oxide-batch runtime, most recently updated first."
    />
  );
  const [list, jobs] = await Promise.all([
    readForPage(executionList, actor, loadExecutionsSearch(query), query),
    readForPage(jobNames, actor),
  ]);
  if (!list.ok) {
    return (
      <>
        {header}
        <InvalidFilters issues={list.issues} words={EXECUTION_FILTER_WORDS} clearHref="/executions" />
      </>
    );
  }
  return (
    <>
      {header}
      <Prefetched queries={[list.prefetch, ...(jobs.ok ? [jobs.prefetch] : [])]}>
        <ExecutionsView />
      </Prefetched>
    </>
  );
});
