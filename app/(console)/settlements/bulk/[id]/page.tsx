import type { Metadata } from 'next';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { BulkReplayView } from '@/components/settlements/bulk-replay-view';
import { filterParams, firstValue } from '@/components/settlements/filter-params';
import { PageHeader } from '@/components/ui/page-header';
import { can } from '@/lib/auth/roles';
import { readBulkReplayDetail } from '@/lib/queries/settlements';
import { bulkReplayItemsSchema } from '@/lib/queries/settlements-types';
import { runtime } from '@/lib/server/runtime';
import { requireActor } from '@/lib/server/session';

type Props = { params: Promise<{ id: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> };

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return { title: `Bulk replay ${(await params).id}` };
}

export default async function BulkReplayPage({ params, searchParams }: Props) {
  const { id } = await params;
  if (!/^\d{1,15}$/.test(id)) notFound();
  const actor = await requireActor();
  const search = await searchParams;
  const query = filterParams({ result: firstValue(search.result), after: firstValue(search.after) });
  const parsed = bulkReplayItemsSchema.safeParse(query);
  const detail = await readBulkReplayDetail(runtime().db, Number(id), parsed.success ? parsed.data : {});
  if (!detail) notFound();
  return (
    <>
      <p className="mb-2 text-sm">
        <Link href="/settlements/bulk" className="text-sky-800 underline dark:text-sky-300">
          Bulk replays
        </Link>
      </p>
      <PageHeader title={`Bulk replay ${detail.job.id}`} description="A frozen snapshot of dead letters, replayed in batches by the server's worker." />
      <BulkReplayView initial={detail} initialKey={parsed.success ? new URLSearchParams(query).toString() : ''} canAct={can(actor.role, 'replaySettlement')} />
    </>
  );
}
