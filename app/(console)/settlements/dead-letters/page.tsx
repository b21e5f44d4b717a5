import type { Metadata } from 'next';
import { Prefetched } from '@/components/data/prefetched';
import { DeadLettersView } from '@/components/settlements/dead-letters-view';
import { PageHeader } from '@/components/ui/page-header';
import { InvalidFilters } from '@/components/ui/invalid-filters';
import { can } from '@/lib/domain/roles';
import { readForPage } from '@/lib/reads/define-read';
import { deadLetterGroupList, deadLetterList } from '@/lib/reads/settlements';
import { page } from '@/lib/server/page';
import { loadDeadLettersSearch, SETTLEMENT_FILTER_WORDS } from '@/lib/url-state/settlements';

export const metadata: Metadata = { title: 'Dead letters' };

export default page('read', {}, async function DeadLettersPage({ actor, query }) {
  const state = loadDeadLettersSearch(query);
  const { cursor: _page, ...filters } = state;
  // Groups ignore the reason (they are the reasons) and the page, as the view's query does. Both
  // reads share one clock in a render (lib/reads/settlements.ts), so they measure ages alike.
  const [list, groups] = await Promise.all([
    readForPage(deadLetterList, actor, state, query),
    readForPage(deadLetterGroupList, actor, { ...filters, reason: null }),
  ]);
  const header = (
    <PageHeader
      title="Dead letters"
      description={
        'Settlements that failed for good, newest first. ' +
        'Replay queues one again; bulk replay acts on a frozen preview of the filter.'
      }
    />
  );
  if (!list.ok) {
    return (
      <>
        {header}
        <InvalidFilters issues={list.issues} words={SETTLEMENT_FILTER_WORDS} clearHref="/settlements/dead-letters" />
      </>
    );
  }
  return (
    <>
      {header}
      <Prefetched queries={[list.prefetch, ...(groups.ok ? [groups.prefetch] : [])]}>
        <DeadLettersView canAct={can(actor.role, 'replaySettlement')} />
      </Prefetched>
    </>
  );
});
