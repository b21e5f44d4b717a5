'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { readJson } from '@/lib/http/read-json';
import { queryKeys } from '@/lib/query-keys';
import type { OverviewPage } from '@/lib/queries/console-reads-types';
import { PageHeader, StatCard } from '../ui/page-header';
import { Sparkline } from '../ui/sparkline';
import { ErrorState } from '../ui/states';
import { StatusBadge } from '../ui/status-badge';
import { Cell, DataTable } from '../ui/table';
import { formatUtc } from '../ui/time-ago';
import type { BatchStatus } from '@/lib/domain/batch-status';
import type { QueueState } from '@/lib/domain/queue-state';
import type { FailureCode } from '@/lib/domain/settlement-vocabulary';
import { executionsHref } from '@/lib/url-state/executions';
import { recoveryHref } from '@/lib/url-state/recovery';
import { deadLettersHref, queueHref } from '@/lib/url-state/settlements';

// Each count links to the list it counts; the count's own link repeats the row's, so it stays out of the tab order.
const COUNT_LINK = 'text-sky-800 underline dark:text-sky-300';

export const overviewQuery = () => ({
  queryKey: queryKeys.overview(),
  queryFn: ({ signal }: { signal: AbortSignal }) => readJson<OverviewPage>('/api/overview', {}, signal),
});

/** The overview's counts and charts, prefetched by the page and kept current by live events. */
export function OverviewView() {
  const { data: overview, error } = useQuery(overviewQuery());
  if (!overview) return <>{error ? <ErrorState detail={error.message} /> : null}</>;
  const total = overview.executionsByStatus.reduce((sum, r) => sum + r.count, 0);
  const deadLetters = overview.deadLettersByReason.reduce((sum, r) => sum + r.count, 0);
  const queueDepth = overview.queue.reduce((sum, r) => sum + r.count, 0);
  return (
    <>
      <PageHeader title="Overview" description={`As of ${formatUtc(new Date(overview.serverNow))} (server clock)`} />
      <section aria-label="Totals" className="grid grid-cols-2 gap-4 lg:grid-cols-5">
        <StatCard label="Executions" value={total.toLocaleString('en-US')} href="/executions" />
        <StatCard label="Stale executions" value={overview.staleExecutions.toLocaleString('en-US')} hint={`no update for over ${Math.round(overview.staleThresholdMs / 60_000)} min`} href={executionsHref({ stale: '1' })} />
        <StatCard label="Pending proposals" value={overview.pendingProposals} href={recoveryHref({ status: 'PENDING' })} />
        <StatCard label="Settlement queue" value={queueDepth.toLocaleString('en-US')} href={queueHref({ state: 'all' })} />
        <StatCard label="Dead letters" value={deadLetters.toLocaleString('en-US')} href="/settlements/dead-letters" />
      </section>
      <section aria-labelledby="last-hour" className="mt-8">
        <h2 id="last-hour" className="mb-2 text-sm font-semibold">Last hour (sampled every 15 s)</h2>
        <div className="grid grid-cols-1 gap-4 sm:grid-cols-2 lg:grid-cols-3">
          {overview.charts.map((series) => (
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
                <Cell><Link href={executionsHref({ status: r.status as BatchStatus })} aria-label={`${r.status}: ${r.count.toLocaleString('en-US')} executions`}><StatusBadge status={r.status} /></Link></Cell>
                <Cell><Link href={executionsHref({ status: r.status as BatchStatus })} tabIndex={-1} className={COUNT_LINK}>{r.count.toLocaleString('en-US')}</Link></Cell>
              </tr>
            ))}
          </DataTable>
        </section>
        <section aria-labelledby="queue">
          <h2 id="queue" className="mb-2 text-sm font-semibold">Settlement queue by state</h2>
          <DataTable caption="Settlement queue by state" head={['State', 'Count']} empty={overview.queue.length === 0}>
            {overview.queue.map((r) => (
              <tr key={r.state}>
                <Cell><Link href={queueHref({ state: r.state as QueueState })} className={COUNT_LINK}>{r.state}</Link></Cell>
                <Cell><Link href={queueHref({ state: r.state as QueueState })} tabIndex={-1} className={COUNT_LINK}>{r.count.toLocaleString('en-US')}</Link></Cell>
              </tr>
            ))}
          </DataTable>
        </section>
        <section aria-labelledby="dead">
          <h2 id="dead" className="mb-2 text-sm font-semibold">Dead letters by reason</h2>
          <DataTable caption="Dead letters by reason" head={['Reason', 'Count']} empty={overview.deadLettersByReason.length === 0}>
            {overview.deadLettersByReason.map((r) => (
              <tr key={r.reason}>
                <Cell mono><Link href={deadLettersHref({ reason: r.reason as FailureCode })} className={COUNT_LINK}>{r.reason}</Link></Cell>
                <Cell><Link href={deadLettersHref({ reason: r.reason as FailureCode })} tabIndex={-1} className={COUNT_LINK}>{r.count}</Link></Cell>
              </tr>
            ))}
          </DataTable>
        </section>
      </div>
    </>
  );
}
