import type { Metadata } from 'next';
import Link from 'next/link';
import { DataTable, Cell } from '@/components/ui/table';
import { PageHeader, StatCard } from '@/components/ui/page-header';
import { StatusBadge } from '@/components/ui/status-badge';
import { Sparkline } from '@/components/ui/sparkline';
import { formatUtc } from '@/components/ui/time-ago';
import { readLastHour } from '@/lib/queries/metric-series';
import { readOverview } from '@/lib/queries/overview';
import { page } from '@/lib/server/page';
import { runtime } from '@/lib/server/runtime';

export const metadata: Metadata = { title: 'Overview' };

// Each count links to the list it counts; the count's own link repeats the row's, so it stays out of the tab order.
const COUNT_LINK = 'text-sky-800 underline dark:text-sky-300';
const queueHref = (state: string) => (state === 'due' ? '/settlements' : `/settlements?state=${state}`);

export default page('read', {}, async function OverviewPage() {
  const { db, settings } = runtime();
  const [overview, charts] = await Promise.all([
    readOverview(db, settings.staleThresholdMs),
    readLastHour(db, [
      { metric: 'settlement_queue_depth', label: 'due', name: 'Due settlements' },
      { metric: 'settlement_queue_depth', label: 'leased', name: 'Leased settlements' },
      { metric: 'settlement_queue_depth', label: 'retry_scheduled', name: 'Retries scheduled' },
      { metric: 'settlement_dead_letters_total', name: 'Dead letters' },
      { metric: 'batch_stale_executions', name: 'Stale executions' },
      { metric: 'recovery_pending_proposals', name: 'Pending proposals' },
    ]),
  ]);
  const total = overview.executionsByStatus.reduce((sum, r) => sum + r.count, 0);
  const deadLetters = overview.deadLettersByReason.reduce((sum, r) => sum + r.count, 0);
  const queueDepth = overview.queue.reduce((sum, r) => sum + r.count, 0);
  return (
    <>
      <PageHeader title="Overview" description={`As of ${formatUtc(overview.serverNow)} (server clock)`} />
      <section aria-label="Totals" className="grid grid-cols-2 gap-4 lg:grid-cols-5">
        <StatCard label="Executions" value={total.toLocaleString('en-US')} href="/executions" />
        <StatCard label="Stale executions" value={overview.staleExecutions.toLocaleString('en-US')} hint={`no update for over ${Math.round(settings.staleThresholdMs / 60_000)} min`} href="/executions?stale=1" />
        <StatCard label="Pending proposals" value={overview.pendingProposals} href="/recovery?status=PENDING" />
        <StatCard label="Settlement queue" value={queueDepth.toLocaleString('en-US')} href="/settlements?state=all" />
        <StatCard label="Dead letters" value={deadLetters.toLocaleString('en-US')} href="/settlements/dead-letters" />
      </section>
      <section aria-labelledby="last-hour" className="mt-8">
        <h2 id="last-hour" className="mb-2 text-sm font-semibold">Last hour (sampled every 15 s)</h2>
        <div className="grid grid-cols-1 gap-4 sm:grid-cols-2 lg:grid-cols-3">
          {charts.map((series) => (
            <Sparkline key={series.name} series={series} />
          ))}
        </div>
      </section>
      <div className="mt-8 grid gap-6 lg:grid-cols-3">
        <section aria-labelledby="by-status">
          <h2 id="by-status" className="mb-2 text-sm font-semibold">Executions by status</h2>
          <DataTable caption="Executions by status" head={['Status', 'Count']} empty={overview.executionsByStatus.length === 0}>
            {overview.executionsByStatus.map((r) => (
              <tr key={r.status}>
                <Cell><Link href={`/executions?status=${r.status}`} aria-label={`${r.status}: ${r.count.toLocaleString('en-US')} executions`}><StatusBadge status={r.status} /></Link></Cell>
                <Cell><Link href={`/executions?status=${r.status}`} tabIndex={-1} className={COUNT_LINK}>{r.count.toLocaleString('en-US')}</Link></Cell>
              </tr>
            ))}
          </DataTable>
        </section>
        <section aria-labelledby="queue">
          <h2 id="queue" className="mb-2 text-sm font-semibold">Settlement queue by state</h2>
          <DataTable caption="Settlement queue by state" head={['State', 'Count']} empty={overview.queue.length === 0}>
            {overview.queue.map((r) => (
              <tr key={r.state}>
                <Cell><Link href={queueHref(r.state)} className={COUNT_LINK}>{r.state}</Link></Cell>
                <Cell><Link href={queueHref(r.state)} tabIndex={-1} className={COUNT_LINK}>{r.count.toLocaleString('en-US')}</Link></Cell>
              </tr>
            ))}
          </DataTable>
        </section>
        <section aria-labelledby="dead">
          <h2 id="dead" className="mb-2 text-sm font-semibold">Dead letters by reason</h2>
          <DataTable caption="Dead letters by reason" head={['Reason', 'Count']} empty={overview.deadLettersByReason.length === 0}>
            {overview.deadLettersByReason.map((r) => (
              <tr key={r.reason}>
                <Cell mono><Link href={`/settlements/dead-letters?reason=${encodeURIComponent(r.reason)}`} className={COUNT_LINK}>{r.reason}</Link></Cell>
                <Cell><Link href={`/settlements/dead-letters?reason=${encodeURIComponent(r.reason)}`} tabIndex={-1} className={COUNT_LINK}>{r.count}</Link></Cell>
              </tr>
            ))}
          </DataTable>
        </section>
      </div>
    </>
  );
});
