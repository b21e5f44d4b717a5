import type { Metadata } from 'next';
import { Prefetched } from '@/components/data/prefetched';
import { filterParams } from '@/components/settlements/filter-params';
import { QueueView } from '@/components/settlements/queue-view';
import { PageHeader } from '@/components/ui/page-header';
import { InvalidFilters } from '@/components/ui/invalid-filters';
import { can } from '@/lib/domain/roles';
import { queueFiltersSchema } from '@/lib/queries/settlements-types';
import { queryKeys } from '@/lib/query-keys';
import { settlementQueuePage } from '@/lib/server/console-reads';
import { page } from '@/lib/server/page';
import { loadQueueSearch } from '@/lib/url-state/settlements';
import { SETTLEMENT_FILTER_WORDS } from '@/lib/url-state/settlements';

export const metadata: Metadata = { title: 'Settlements' };

export default page('read', { search: queueFiltersSchema }, async function SettlementsPage({ actor, query, search }) {
  const params = filterParams(loadQueueSearch(query));
  const header = (
    <>
      <PageHeader
        title="Settlements"
        description="The settlement queue in due order: due, leased by a worker, or waiting for a retry. Times are the server's clock."
      />
    </>
  );
  if (!search.ok) {
    return (
      <>
        {header}
        <InvalidFilters issues={search.issues} words={SETTLEMENT_FILTER_WORDS} clearHref="/settlements" />
      </>
    );
  }
  return (
    <>
      {header}
      <Prefetched
        queries={[{ queryKey: queryKeys.settlements.queue(params), queryFn: () => settlementQueuePage(search.value) }]}
      >
        <QueueView canAct={can(actor.role, 'replaySettlement')} />
      </Prefetched>
    </>
  );
});
