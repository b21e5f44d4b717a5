import type { Metadata } from 'next';
import { notFound } from 'next/navigation';
import { Prefetched } from '@/components/data/prefetched';
import { ProposalView } from '@/components/recovery/proposal-view';
import { idPathSchema } from '@/lib/domain/path-segment';
import { readProposal } from '@/lib/queries/recovery';
import { queryKeys } from '@/lib/query-keys';
import { page } from '@/lib/server/page';
import { primaryDb } from '@/lib/server/console-reads';
import { runtime } from '@/lib/server/composition-root';

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  return { title: `Proposal ${(await params).id}` };
}

export default page('read', { params: idPathSchema }, async function ProposalPage({ actor, params }) {
  const { settings } = runtime();
  const db = primaryDb();
  const proposal = await readProposal(db, params.id);
  if (!proposal) notFound();
  return (
    <Prefetched queries={[{ queryKey: queryKeys.proposals.detail(params.id), queryFn: async () => proposal }]}>
      <ProposalView
        id={params.id}
        actor={{ id: actor.id, role: actor.role }}
        settings={{ staleThresholdMs: settings.staleThresholdMs, maxClockSkewMs: settings.maxClockSkewMs }}
      />
    </Prefetched>
  );
});
