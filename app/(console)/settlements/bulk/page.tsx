import type { Metadata } from 'next';
import { Prefetched } from '@/components/data/prefetched';
import { BulkReplayList } from '@/components/settlements/bulk-replay-list';
import { filterParams } from '@/components/settlements/filter-params';
import { SettlementTabs } from '@/components/settlements/settlement-tabs';
import { PageHeader } from '@/components/ui/page-header';
import { InvalidFilters } from '@/components/ui/invalid-filters';
import { listBulkReplays } from '@/lib/queries/settlements';
import { bulkReplayListSchema } from '@/lib/queries/settlements-types';
import { queryKeys } from '@/lib/query-keys';
import { listDb } from '@/lib/server/read-source';
import { page } from '@/lib/server/page';
import { loadBulkReplaysSearch } from '@/lib/url-state/settlements';
import { BULK_REPLAY_FILTER_WORDS } from '@/lib/url-state/settlements';

export const metadata: Metadata = { title: 'Bulk replays' };

export default page('read', { search: bulkReplayListSchema }, async function BulkReplaysPage({ query, search }) {
  const params = filterParams(loadBulkReplaysSearch(query));
  return (
    <>
      <PageHeader
        title="Bulk replays"
        description="Every bulk replay of dead letters, newest first. Each keeps its frozen items and their results."
      />
      <SettlementTabs />
      {search.ok ? (
        <Prefetched
          queries={[
            {
              queryKey: queryKeys.settlements.bulkReplays(params),
              queryFn: async () => listBulkReplays(await listDb(), search.value),
            },
          ]}
        >
          <BulkReplayList />
        </Prefetched>
      ) : (
        <InvalidFilters issues={search.issues} words={BULK_REPLAY_FILTER_WORDS} clearHref="/settlements/bulk" />
      )}
    </>
  );
});
