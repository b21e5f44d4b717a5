import type { Metadata } from 'next';
import { Prefetched } from '@/components/data/prefetched';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { BulkReplayView } from '@/components/settlements/bulk-replay-view';
import { filterParams } from '@/components/settlements/filter-params';
import { PageHeader } from '@/components/ui/page-header';
import { can } from '@/lib/domain/roles';
import { readBulkReplayDetail } from '@/lib/queries/settlements';
import { bulkReplayItemsSchema } from '@/lib/queries/settlements-types';
import { queryKeys } from '@/lib/query-keys';
import { primaryDb } from '@/lib/server/console-reads';
import { idPathSchema } from '@/lib/domain/path-segment';
import { page } from '@/lib/server/page';
import { loadBulkReplayItemsSearch } from '@/lib/url-state/settlements';

type Props = { params: Promise<{ id: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> };

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return { title: `Bulk replay ${(await params).id}` };
}

export default page(
  'read',
  { params: idPathSchema, search: bulkReplayItemsSchema },
  async function BulkReplayPage({ actor, params, query: raw, search }) {
    const query = filterParams(loadBulkReplayItemsSearch(raw));
    const detail = await readBulkReplayDetail(primaryDb(), params.id, search.ok ? search.value : {});
    if (!detail) notFound();
    return (
      <>
        <p className="mb-2 text-sm">
          <Link href="/settlements/bulk" className="text-sky-800 underline dark:text-sky-300">
            Bulk replays
          </Link>
        </p>
        <PageHeader
          title={`Bulk replay ${detail.job.id}`}
          description="A frozen snapshot of dead letters, replayed in batches by the server's worker."
        />
        <Prefetched
          queries={
            search.ok
              ? [{ queryKey: queryKeys.settlements.bulkReplay(detail.job.id, query), queryFn: async () => detail }]
              : []
          }
        >
          <BulkReplayView jobId={detail.job.id} canAct={can(actor.role, 'replaySettlement')} />
        </Prefetched>
      </>
    );
  },
);
