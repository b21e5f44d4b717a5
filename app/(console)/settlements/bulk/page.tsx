import type { Metadata } from 'next';
import { BulkReplayList } from '@/components/settlements/bulk-replay-list';
import { filterParams, firstValue } from '@/components/settlements/filter-params';
import { SettlementTabs } from '@/components/settlements/settlement-tabs';
import { PageHeader } from '@/components/ui/page-header';
import { ErrorState } from '@/components/ui/states';
import { listBulkReplays } from '@/lib/queries/settlements';
import { bulkReplayListSchema } from '@/lib/queries/settlements-types';
import { runtime } from '@/lib/server/runtime';
import { requireActor } from '@/lib/server/session';

export const metadata: Metadata = { title: 'Bulk replays' };

export default async function BulkReplaysPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  await requireActor();
  const search = await searchParams;
  const params = filterParams({ status: firstValue(search.status), cursor: firstValue(search.cursor) });
  const parsed = bulkReplayListSchema.safeParse(params);
  return (
    <>
      <PageHeader title="Bulk replays" description="Every bulk replay of dead letters, newest first. Each keeps its frozen items and their results." />
      <SettlementTabs />
      {parsed.success ? (
        <BulkReplayList initial={await listBulkReplays(runtime().db, parsed.data)} initialKey={new URLSearchParams(params).toString()} />
      ) : (
        <ErrorState title="These filters are not valid" detail={parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')} />
      )}
    </>
  );
}
