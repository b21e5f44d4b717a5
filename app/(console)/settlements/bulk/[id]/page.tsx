import type { Metadata } from 'next';
import { Prefetched } from '@/components/data/prefetched';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { BulkReplayView } from '@/components/settlements/bulk-replay-view';
import { PageHeader } from '@/components/ui/page-header';
import { idPathSchema } from '@/lib/domain/path-segment';
import { can } from '@/lib/domain/roles';
import { readForPage } from '@/lib/reads/define-read';
import { bulkReplayDetail } from '@/lib/reads/settlements';
import { page } from '@/lib/server/page';
import { loadBulkReplayItemsSearch } from '@/lib/url-state/settlements';

type Props = { params: Promise<{ id: string }> };

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return { title: `Bulk replay ${(await params).id}` };
}

export default page('read', { params: idPathSchema }, async function BulkReplayPage({ actor, params, query }) {
  const filtered = await readForPage(
    bulkReplayDetail,
    actor,
    { id: params.id, ...loadBulkReplayItemsSearch(query) },
    query,
  );
  // Item filters that do not parse: the job still shows, and the view asks the API, which names the field.
  const detail = filtered.ok ? filtered : await readForPage(bulkReplayDetail, actor, { id: params.id });
  const value = detail.ok ? await detail.value() : null;
  if (!value) notFound();
  const { job } = value;
  return (
    <>
      <p className="mb-2 text-sm">
        <Link href="/settlements/bulk" className="text-sky-800 underline dark:text-sky-300">
          Bulk replays
        </Link>
      </p>
      <PageHeader
        title={`Bulk replay ${job.id}`}
        description="A frozen snapshot of dead letters, replayed in batches by the server's worker."
      />
      <Prefetched queries={filtered.ok ? [filtered.prefetch] : []}>
        <BulkReplayView jobId={job.id} canAct={can(actor.role, 'replaySettlement')} />
      </Prefetched>
    </>
  );
});
