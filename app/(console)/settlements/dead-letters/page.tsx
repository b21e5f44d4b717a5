import type { Metadata } from 'next';
import { Prefetched } from '@/components/data/prefetched';
import { DeadLettersView } from '@/components/settlements/dead-letters-view';
import { filterParams } from '@/components/settlements/filter-params';
import { PageHeader } from '@/components/ui/page-header';
import { InvalidFilters } from '@/components/ui/invalid-filters';
import { can } from '@/lib/domain/roles';
import { deadLetterFiltersSchema } from '@/lib/queries/settlements-types';
import { queryKeys } from '@/lib/query-keys';
import { deadLetterGroupsPage, deadLettersPage, settlementReadContext } from '@/lib/server/console-reads';
import { page } from '@/lib/server/page';
import { loadDeadLettersSearch } from '@/lib/url-state/settlements';
import { SETTLEMENT_FILTER_WORDS } from '@/lib/url-state/settlements';

export const metadata: Metadata = { title: 'Dead letters' };

export default page(
  'read',
  { search: deadLetterFiltersSchema },
  async function DeadLettersPage({ actor, query, search }) {
    const state = loadDeadLettersSearch(query);
    const params = filterParams(state);
    const header = (
      <>
        <PageHeader
          title="Dead letters"
          description="Settlements that failed for good, newest first. Replay queues one again; bulk replay acts on a frozen preview of the filter."
        />
      </>
    );
    if (!search.ok) {
      return (
        <>
          {header}
          <InvalidFilters
            issues={search.issues}
            words={SETTLEMENT_FILTER_WORDS}
            clearHref="/settlements/dead-letters"
          />
        </>
      );
    }
    // One clock (and one read of the sampler's figures) for both views, so they measure ages alike.
    const context = await settlementReadContext();
    return (
      <>
        {header}
        <Prefetched
          queries={[
            {
              queryKey: queryKeys.settlements.deadLetters(params),
              queryFn: () => deadLettersPage(search.value, context),
            },
            // Groups ignore the reason (they are the reasons) and the page, as the view's query does.
            {
              queryKey: queryKeys.settlements.deadLetterGroups(filterParams({ ...state, reason: null, cursor: null })),
              queryFn: () => deadLetterGroupsPage(search.value, context),
            },
          ]}
        >
          <DeadLettersView canAct={can(actor.role, 'replaySettlement')} />
        </Prefetched>
      </>
    );
  },
);
