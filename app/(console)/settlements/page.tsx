import type { Metadata } from 'next';
import { PageHeader } from '@/components/ui/page-header';
import { Cell, DataTable } from '@/components/ui/table';
import { TimeAgo } from '@/components/ui/time-ago';
import { listDeadLetters, listDueAttempts } from '@/lib/queries/lists';
import { serverNow } from '@/lib/queries/clock';
import { runtime } from '@/lib/server/runtime';

export const metadata: Metadata = { title: 'Settlements' };

export default async function SettlementsPage() {
  const { db } = runtime();
  const [attempts, deadLetters, now] = await Promise.all([
    listDueAttempts(db),
    listDeadLetters(db),
    serverNow(db),
  ]);
  return (
    <>
      <PageHeader title="Settlements" description="The settlement queue in due order, and dead letters." />
      <section aria-labelledby="queue" className="mb-8">
        <h2 id="queue" className="mb-2 text-sm font-semibold">Queue (due order)</h2>
        <DataTable caption="Settlement queue" head={['Receipt', 'Kind', 'Attempts', 'Visible', 'Lease owner', 'Lease until', 'Reason']} empty={attempts.length === 0}>
          {attempts.map((a) => (
            <tr key={a.receiptId}>
              <Cell mono>{a.receiptId}</Cell>
              <Cell>{a.workKind}</Cell>
              <Cell>{a.attempts}</Cell>
              <Cell><TimeAgo at={new Date(Number(a.nextVisibleAtMs))} now={now} /></Cell>
              <Cell>{a.leaseOwner ?? '—'}</Cell>
              <Cell>{a.leaseUntilMs ? <TimeAgo at={new Date(Number(a.leaseUntilMs))} now={now} /> : '—'}</Cell>
              <Cell mono>{a.reasonCode ?? '—'}</Cell>
            </tr>
          ))}
        </DataTable>
      </section>
      <section aria-labelledby="dead">
        <h2 id="dead" className="mb-2 text-sm font-semibold">Dead letters</h2>
        <DataTable caption="Dead letters" head={['Receipt', 'Reason', 'Attempts', 'Recorded']} empty={deadLetters.length === 0}>
          {deadLetters.map((d) => (
            <tr key={d.receiptId}>
              <Cell mono>{d.receiptId}</Cell>
              <Cell mono>{d.reason}</Cell>
              <Cell>{d.attempts}</Cell>
              <Cell><TimeAgo at={new Date(Number(d.recordedAtMs))} now={now} /></Cell>
            </tr>
          ))}
        </DataTable>
      </section>
    </>
  );
}
