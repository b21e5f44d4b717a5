import type { Metadata } from 'next';
import { DeadLettersView } from '@/components/settlements/dead-letters-view';
import { filterParams, filterValuesOf, firstValue } from '@/components/settlements/filter-params';
import { SettlementTabs } from '@/components/settlements/settlement-tabs';
import { PageHeader } from '@/components/ui/page-header';
import { InvalidFilters } from '@/components/ui/states';
import { can } from '@/lib/auth/roles';
import { deadLetterGroups, listDeadLetterPage, settlementNowMs } from '@/lib/queries/settlements';
import { deadLetterFiltersSchema } from '@/lib/queries/settlements-types';
import { runtime } from '@/lib/server/runtime';
import { requireActor } from '@/lib/server/session';

export const metadata: Metadata = { title: 'Dead letters' };

type SearchParams = Promise<Record<string, string | string[] | undefined>>;

export default async function DeadLettersPage({ searchParams }: { searchParams: SearchParams }) {
  const actor = await requireActor();
  const search = await searchParams;
  const values = filterValuesOf(search);
  const params = filterParams(values, { cursor: firstValue(search.cursor) });
  const parsed = deadLetterFiltersSchema.safeParse(params);
  const header = (
    <>
      <PageHeader title="Dead letters" description="Settlements that failed for good, newest first. Replay queues one again; bulk replay acts on a frozen preview of the filter." />
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
  const { db } = runtime();
  // One clock for both reads, so the groups and the list measure ages alike.
  const nowMs = await settlementNowMs(db);
  const [initial, groups] = await Promise.all([listDeadLetterPage(db, parsed.data, { nowMs }), deadLetterGroups(db, parsed.data, { nowMs })]);
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
}
