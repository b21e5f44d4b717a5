import type { Metadata } from 'next';
import { PageHeader } from '@/components/ui/page-header';
import { StatusBadge } from '@/components/ui/status-badge';
import { Cell, DataTable } from '@/components/ui/table';
import { TimeAgo } from '@/components/ui/time-ago';
import { listOrchestrationLeases, listProposals } from '@/lib/queries/lists';
import { serverNow } from '@/lib/queries/clock';
import { runtime } from '@/lib/server/runtime';

export const metadata: Metadata = { title: 'Recovery' };

export default async function RecoveryPage() {
  const { db } = runtime();
  const [proposals, leases, now] = await Promise.all([
    listProposals(db),
    listOrchestrationLeases(db),
    serverNow(db),
  ]);
  return (
    <>
      <PageHeader title="Recovery" description="Recovery proposals awaiting approval, and orchestration leases." />
      <section aria-labelledby="proposals" className="mb-8">
        <h2 id="proposals" className="mb-2 text-sm font-semibold">Proposals</h2>
        <DataTable caption="Recovery proposals" head={['Proposal', 'Target', 'Status', 'Proposed by', 'Created', 'Deadline']} empty={proposals.length === 0}>
          {proposals.map((p) => (
            <tr key={p.id}>
              <Cell mono>{p.id}</Cell>
              <Cell>{p.targetKind} {p.targetId}</Cell>
              <Cell><StatusBadge status={p.status} /></Cell>
              <Cell>{p.proposerLogin}</Cell>
              <Cell><TimeAgo at={p.createdAt} now={now} /></Cell>
              <Cell><TimeAgo at={p.waitDeadline} now={now} /></Cell>
            </tr>
          ))}
        </DataTable>
      </section>
      <section aria-labelledby="leases">
        <h2 id="leases" className="mb-2 text-sm font-semibold">Orchestration leases</h2>
        <DataTable caption="Orchestration leases" head={['Orchestration', 'Owner', 'Fencing token', 'Lease expires']} empty={leases.length === 0}>
          {leases.map((l) => (
            <tr key={l.executionId}>
              <Cell mono>{l.executionId}</Cell>
              <Cell>{l.leaseOwner}</Cell>
              <Cell>{l.fencingToken}</Cell>
              <Cell><TimeAgo at={new Date(Number(l.leaseExpiresAtMs))} now={now} /></Cell>
            </tr>
          ))}
        </DataTable>
      </section>
    </>
  );
}
