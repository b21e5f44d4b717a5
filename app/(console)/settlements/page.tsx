import type { Metadata } from 'next';
import { Prefetched } from '@/components/data/prefetched';
import { QueueView } from '@/components/settlements/queue-view';
import { PageHeader } from '@/components/ui/page-header';
import { InvalidFilters } from '@/components/ui/invalid-filters';
import { can } from '@/lib/domain/roles';
import { readForPage } from '@/lib/reads/define-read';
import { settlementQueue } from '@/lib/reads/settlements';
import { page } from '@/lib/server/page';
import { loadQueueSearch, SETTLEMENT_FILTER_WORDS } from '@/lib/url-state/settlements';

export const metadata: Metadata = { title: 'Settlements' };

export default page('read', {}, async function SettlementsPage({ actor, query }) {
  const queue = await readForPage(settlementQueue, actor, loadQueueSearch(query), query);
  const header = (
    <PageHeader
      title="Settlements"
      description={
        'The settlement queue in due order: due, leased by a worker, or waiting for a retry. ' +
        "Times are the server's clock."
      }
    />
  );
  if (!queue.ok) {
    return (
      <>
        {header}
        <InvalidFilters issues={queue.issues} words={SETTLEMENT_FILTER_WORDS} clearHref="/settlements" />
      </>
    );
  }
  return (
    <>
      {header}
      <Prefetched queries={[queue.prefetch]}>
        <QueueView canAct={can(actor.role, 'replaySettlement')} />
      </Prefetched>
    </>
  );
});
