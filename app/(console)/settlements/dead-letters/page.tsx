import type { Metadata } from 'next';
import { DeadLettersView } from '@/components/settlements/dead-letters-view';
import { filterParams, filterValuesOf, firstValue } from '@/components/settlements/filter-params';
import { PageHeader } from '@/components/ui/page-header';
import { InvalidFilters } from '@/components/ui/states';
import { can } from '@/lib/auth/roles';
import { deadLetterGroups, listDeadLetterPage, settlementNowMs } from '@/lib/queries/settlements';
import { deadLetterFiltersSchema } from '@/lib/queries/settlements-types';
import { runtime } from '@/lib/server/runtime';
import { page } from '@/lib/server/page';

export const metadata: Metadata = { title: 'Dead letters' };

export default page('read', { search: deadLetterFiltersSchema }, async function DeadLettersPage({ actor, query, search }) {
  const values = filterValuesOf(query);
  const params = filterParams(values, { cursor: firstValue(query.cursor) });
  const header = (
    <>
      <PageHeader title="Dead letters" description="Settlements that failed for good, newest first. Replay queues one again; bulk replay acts on a frozen preview of the filter." />
    </>
  );
  if (!search.ok) {
    return (
      <>
        {header}
        <InvalidFilters issues={search.issues} />
      </>
    );
  }
  const { db } = runtime();
  // One clock for both reads, so the groups and the list measure ages alike.
  const nowMs = await settlementNowMs(db);
  const [initial, groups] = await Promise.all([listDeadLetterPage(db, search.value, { nowMs }), deadLetterGroups(db, search.value, { nowMs })]);
  return (
    <>
      {header}
      <DeadLettersView
        initial={initial}
        initialGroups={groups}
        initialKey={new URLSearchParams(params).toString()}
        initialGroupKey={new URLSearchParams(filterParams({ ...values, reason: undefined })).toString()}
        canAct={can(actor.role, 'replaySettlement')}
      />
    </>
  );
});
