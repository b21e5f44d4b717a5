import type { Metadata } from 'next';
import { filterParams, filterValuesOf, firstValue } from '@/components/settlements/filter-params';
import { QueueView } from '@/components/settlements/queue-view';
import { SettlementTabs } from '@/components/settlements/settlement-tabs';
import { PageHeader } from '@/components/ui/page-header';
import { InvalidFilters } from '@/components/ui/states';
import { can } from '@/lib/auth/roles';
import { listSettlementQueue } from '@/lib/queries/settlements';
import { queueFiltersSchema } from '@/lib/queries/settlements-types';
import { runtime } from '@/lib/server/runtime';
import { requireActor } from '@/lib/server/session';

export const metadata: Metadata = { title: 'Settlements' };

type SearchParams = Promise<Record<string, string | string[] | undefined>>;

export default async function SettlementsPage({ searchParams }: { searchParams: SearchParams }) {
  const actor = await requireActor();
  const search = await searchParams;
  const params = filterParams(filterValuesOf(search), { state: firstValue(search.state), cursor: firstValue(search.cursor) });
  const parsed = queueFiltersSchema.safeParse(params);
  const header = (
    <>
      <PageHeader title="Settlements" description="The settlement queue in due order: due, leased by a worker, or waiting for a retry. Times are the server's clock." />
      <SettlementTabs />
    </>
  );
  if (!parsed.success) {
    return (
      <>
        {header}
        <InvalidFilters issues={parsed.error.issues} />
      </>
    );
  }
  const initial = await listSettlementQueue(runtime().db, parsed.data);
  return (
    <>
      {header}
      <QueueView initial={initial} initialKey={new URLSearchParams(params).toString()} canAct={can(actor.role, 'replaySettlement')} />
    </>
  );
}
