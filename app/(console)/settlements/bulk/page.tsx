import type { Metadata } from 'next';
import { Prefetched } from '@/components/data/prefetched';
import { BulkReplayList } from '@/components/settlements/bulk-replay-list';
import { SettlementTabs } from '@/components/settlements/settlement-tabs';
import { PageHeader } from '@/components/ui/page-header';
import { InvalidFilters } from '@/components/ui/invalid-filters';
import { readForPage } from '@/lib/reads/define-read';
import { bulkReplayList } from '@/lib/reads/settlements';
import { page } from '@/lib/server/page';
import { BULK_REPLAY_FILTER_WORDS, loadBulkReplaysSearch } from '@/lib/url-state/settlements';

export const metadata: Metadata = { title: 'Bulk replays' };

export default page('read', {}, async function BulkReplaysPage({ actor, query }) {
  const jobs = await readForPage(bulkReplayList, actor, loadBulkReplaysSearch(query), query);
  return (
    <>
      <PageHeader
        title="Bulk replays"
        description="Every bulk replay of dead letters, newest first. Each keeps its frozen items and their results."
      />
      <SettlementTabs />
      {jobs.ok ? (
        <Prefetched queries={[jobs.prefetch]}>
          <BulkReplayList />
        </Prefetched>
      ) : (
        <InvalidFilters issues={jobs.issues} words={BULK_REPLAY_FILTER_WORDS} clearHref="/settlements/bulk" />
      )}
    </>
  );
});
