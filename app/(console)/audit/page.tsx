import type { Metadata } from 'next';
import { PageHeader } from '@/components/ui/page-header';
import { StatusBadge } from '@/components/ui/status-badge';
import { Cell, DataTable } from '@/components/ui/table';
import { TimeAgo } from '@/components/ui/time-ago';
import { listAuditEvents } from '@/lib/queries/lists';
import { serverNow } from '@/lib/queries/clock';
import { runtime } from '@/lib/server/runtime';

export const metadata: Metadata = { title: 'Audit' };

export default async function AuditPage() {
  const { db } = runtime();
  const [events, now] = await Promise.all([
    listAuditEvents(db),
    serverNow(db),
  ]);
  return (
    <>
      <PageHeader title="Audit" description="Every action taken through Keel, applied or refused." />
      <DataTable caption="Audit events" head={['When', 'Actor', 'Role', 'Action', 'Target', 'Outcome']} empty={events.length === 0}>
        {events.map((e) => (
          <tr key={e.id}>
            <Cell><TimeAgo at={e.at} now={now} /></Cell>
            <Cell>{e.actorLogin}</Cell>
            <Cell>{e.actorRole}</Cell>
            <Cell mono>{e.action}</Cell>
            <Cell>{e.targetKind} {e.targetId}</Cell>
            <Cell><StatusBadge status={e.outcome} />{e.code ? <span className="ml-2 font-mono text-xs">{e.code}</span> : null}</Cell>
          </tr>
        ))}
      </DataTable>
    </>
  );
}
