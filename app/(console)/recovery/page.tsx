import type { Metadata } from 'next';
import Link from 'next/link';
import { OrchestrationTakeoverButton } from '@/components/recovery/orchestration-takeover-button';
import { PageHeader } from '@/components/ui/page-header';
import { StatusBadge } from '@/components/ui/status-badge';
import { Cell, DataTable } from '@/components/ui/table';
import { TimeAgo } from '@/components/ui/time-ago';
import { can } from '@/lib/domain/roles';
import { PROPOSAL_STATUSES } from '@/lib/domain/proposal-status';
import { listOrchestrationLeases, listProposals, proposalFiltersSchema } from '@/lib/queries/recovery';
import { runtime } from '@/lib/server/runtime';
import { page } from '@/lib/server/page';
import { InvalidFilters } from '@/components/ui/states';

export const metadata: Metadata = { title: 'Recovery' };

const tab = 'rounded-md border border-zinc-300 px-2 py-1 aria-[current=page]:bg-zinc-900 aria-[current=page]:text-white dark:border-zinc-700 dark:aria-[current=page]:bg-zinc-100 dark:aria-[current=page]:text-zinc-900';

export default page('read', { search: proposalFiltersSchema }, async function RecoveryPage({ actor, search }) {
  const { db, settings } = runtime();
  const [proposals, leases] = await Promise.all([
    listProposals(db, search.ok ? search.value : {}),
    listOrchestrationLeases(db, settings.checkpointKey!),
  ]);
  const now = new Date(proposals.serverNow);
  const status = search.ok ? search.value.status : undefined;
  const canPropose = can(actor.role, 'proposeRecovery');
  return (
    <>
      <PageHeader title="Recovery" description="Recovery proposals, each bound to an evidence digest, and orchestration leases." />
      {search.ok ? null : <InvalidFilters issues={search.issues} />}
      <section aria-labelledby="proposals" className="mb-8">
        <h2 id="proposals" className="mb-2 text-sm font-semibold">Proposals</h2>
        <nav aria-label="Filter proposals by status" className="mb-3 flex flex-wrap gap-2 text-sm">
          <Link href="/recovery" aria-current={!status ? 'page' : undefined} className={tab}>All</Link>
          {PROPOSAL_STATUSES.map((s) => (
            <Link key={s} href={`/recovery?status=${s}`} aria-current={status === s ? 'page' : undefined} className={tab}>{s}</Link>
          ))}
        </nav>
        <DataTable caption="Recovery proposals" head={['Proposal', 'Target', 'Status', 'Proposed by', 'Created', 'Deadline', 'Decided by']} empty={proposals.items.length === 0}>
          {proposals.items.map((p) => (
            <tr key={p.id}>
              <Cell mono><Link href={`/recovery/${p.id}`} className="text-sky-800 underline dark:text-sky-300">{p.id}</Link></Cell>
              <Cell>{p.targetKind} {p.targetId}</Cell>
              <Cell><StatusBadge status={p.status} /></Cell>
              <Cell>{p.proposerLogin}</Cell>
              <Cell><TimeAgo at={new Date(p.createdAt)} now={now} /></Cell>
              <Cell><TimeAgo at={new Date(p.deadline)} now={now} /></Cell>
              <Cell>{p.deciderLogin ?? '—'}</Cell>
            </tr>
          ))}
        </DataTable>
        {proposals.nextCursor ? (
          <Link href={`/recovery?${new URLSearchParams({ ...(status ? { status } : {}), cursor: proposals.nextCursor })}`} className="mt-3 inline-block text-sm font-medium text-sky-800 underline dark:text-sky-300">
            Older proposals
          </Link>
        ) : null}
      </section>
      <section aria-labelledby="orchestrations-heading" id="orchestrations">
        <h2 id="orchestrations-heading" className="mb-2 text-sm font-semibold">Orchestration leases</h2>
        <DataTable caption="Orchestration leases" head={['Orchestration', 'Owner', 'Fencing token', 'Lease expires', 'Authentication', '']} empty={leases.items.length === 0}>
          {leases.items.map((l) => (
            <tr key={l.executionId}>
              <Cell mono>{l.executionId}</Cell>
              <Cell wrap>{l.leaseOwner}</Cell>
              <Cell>{l.fencingToken}</Cell>
              <Cell><TimeAgo at={new Date(l.expiresAt)} now={now} />{l.expired ? <span className="ml-2 text-xs font-medium text-amber-800 dark:text-amber-300">lapsed</span> : null}</Cell>
              <Cell>{l.authenticated ? 'verified' : <span className="font-medium text-red-800 dark:text-red-300">does not verify</span>}</Cell>
              <Cell>
                {l.pendingProposalId ? (
                  <Link href={`/recovery/${l.pendingProposalId}`} className="text-sky-800 underline dark:text-sky-300">Proposal {l.pendingProposalId} pending</Link>
                ) : canPropose && l.expired && l.authenticated ? (
                  <OrchestrationTakeoverButton executionId={l.executionId} leaseOwner={l.leaseOwner} fencingToken={l.fencingToken} />
                ) : null}
              </Cell>
            </tr>
          ))}
        </DataTable>
      </section>
    </>
  );
});
