import type { Metadata } from 'next';
import { Prefetched } from '@/components/data/prefetched';
import { RecoveryView } from '@/components/recovery/recovery-view';
import { PageHeader } from '@/components/ui/page-header';
import { InvalidFilters } from '@/components/ui/invalid-filters';
import { can } from '@/lib/domain/roles';
import { readForPage } from '@/lib/reads/define-read';
import { orchestrationLeases, proposalList } from '@/lib/reads/recovery';
import { page } from '@/lib/server/page';
import { loadRecoverySearch, PROPOSAL_FILTER_WORDS } from '@/lib/url-state/recovery';

export const metadata: Metadata = { title: 'Recovery' };

export default page('read', {}, async function RecoveryPage({ actor, query }) {
  const [proposals, leases] = await Promise.all([
    readForPage(proposalList, actor, loadRecoverySearch(query), query),
    readForPage(orchestrationLeases, actor),
  ]);
  return (
    <>
      <PageHeader
        title="Recovery"
        description="Recovery proposals, each bound to an evidence digest, and orchestration leases."
      />
      {proposals.ok ? null : (
        <InvalidFilters issues={proposals.issues} words={PROPOSAL_FILTER_WORDS} clearHref="/recovery" />
      )}
      <Prefetched queries={[proposals, leases].flatMap((read) => (read.ok ? [read.prefetch] : []))}>
        <RecoveryView canPropose={can(actor.role, 'proposeRecovery')} />
      </Prefetched>
    </>
  );
});
