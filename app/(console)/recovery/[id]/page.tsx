import type { Metadata } from 'next';
import { notFound } from 'next/navigation';
import { Prefetched } from '@/components/data/prefetched';
import { ProposalView } from '@/components/recovery/proposal-view';
import { idPathSchema } from '@/lib/domain/path-segment';
import { readForPage } from '@/lib/reads/define-read';
import { proposalDetail } from '@/lib/reads/recovery';
import { runtime } from '@/lib/server/composition-root';
import { page } from '@/lib/server/page';

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  return { title: `Proposal ${(await params).id}` };
}

export default page('read', { params: idPathSchema }, async function ProposalPage({ actor, params }) {
  const { settings } = runtime();
  const proposal = await readForPage(proposalDetail, actor, { id: params.id });
  if (!proposal.ok || !(await proposal.value())) notFound();
  return (
    <Prefetched queries={[proposal.prefetch]}>
      <ProposalView
        id={params.id}
        actor={{ id: actor.id, role: actor.role }}
        settings={{ staleThresholdMs: settings.staleThresholdMs, maxClockSkewMs: settings.maxClockSkewMs }}
      />
    </Prefetched>
  );
});
