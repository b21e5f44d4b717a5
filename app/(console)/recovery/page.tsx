import type { Metadata } from 'next';
import { Prefetched } from '@/components/data/prefetched';
import { RecoveryView } from '@/components/recovery/recovery-view';
import { PageHeader } from '@/components/ui/page-header';
import { InvalidFilters } from '@/components/ui/invalid-filters';
import { can } from '@/lib/domain/roles';
import { listOrchestrationLeases, listProposals, proposalFiltersSchema } from '@/lib/queries/recovery';
import { queryKeys } from '@/lib/query-keys';
import { page } from '@/lib/server/page';
import { listDb } from '@/lib/server/read-source';
import { runtime } from '@/lib/server/composition-root';
import { loadRecoverySearch, proposalListParams } from '@/lib/url-state/recovery';
import { PROPOSAL_FILTER_WORDS } from '@/lib/url-state/recovery';

export const metadata: Metadata = { title: 'Recovery' };

export default page('read', { search: proposalFiltersSchema }, async function RecoveryPage({ actor, query, search }) {
  const { settings } = runtime();
  const db = await listDb();
  const params = proposalListParams(loadRecoverySearch(query));
  return (
    <>
      <PageHeader
        title="Recovery"
        description="Recovery proposals, each bound to an evidence digest, and orchestration leases."
      />
      {search.ok ? null : <InvalidFilters issues={search.issues} words={PROPOSAL_FILTER_WORDS} clearHref="/recovery" />}
      <Prefetched
        queries={[
          ...(search.ok
            ? [{ queryKey: queryKeys.proposals.list(params), queryFn: () => listProposals(db, search.value) }]
            : []),
          {
            queryKey: queryKeys.orchestrations.list({}),
            queryFn: () => listOrchestrationLeases(db, settings.checkpointKey!),
          },
        ]}
      >
        <RecoveryView canPropose={can(actor.role, 'proposeRecovery')} />
      </Prefetched>
    </>
  );
});
