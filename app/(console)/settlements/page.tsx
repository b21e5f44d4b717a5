import type { Metadata } from 'next';
import { filterParams, filterValuesOf, firstValue } from '@/components/settlements/filter-params';
import { QueueView } from '@/components/settlements/queue-view';
import { PageHeader } from '@/components/ui/page-header';
import { InvalidFilters } from '@/components/ui/states';
import { can } from '@/lib/auth/roles';
import { listSettlementQueue } from '@/lib/queries/settlements';
import { queueFiltersSchema } from '@/lib/queries/settlements-types';
import { runtime } from '@/lib/server/runtime';
import { page } from '@/lib/server/page';

export const metadata: Metadata = { title: 'Settlements' };

export default page('read', { search: queueFiltersSchema }, async function SettlementsPage({ actor, query, search }) {
  const params = filterParams(filterValuesOf(query), { state: firstValue(query.state), cursor: firstValue(query.cursor) });
  const header = (
    <>
      <PageHeader title="Settlements" description="The settlement queue in due order: due, leased by a worker, or waiting for a retry. Times are the server's clock." />
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
  const initial = await listSettlementQueue(runtime().db, search.value);
  return (
    <>
      {header}
      <QueueView initial={initial} initialKey={new URLSearchParams(params).toString()} canAct={can(actor.role, 'replaySettlement')} />
    </>
  );
});
