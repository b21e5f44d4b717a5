'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import type { ReactNode } from 'react';
import { needsYouQuery, overviewQuery } from '@/lib/reads/queries';
import type { OverviewLinks } from '@/lib/url-state/overview';
import { PageHeader, StatCard } from '../ui/page-header';
import { NeedsYouPanel } from './needs-you-panel';
import { ErrorState } from '../ui/states';
import { StatusBadge } from '../ui/status-badge';
import { RatesLastHour } from './rates-last-hour';
import { Cell, DataTable } from '../ui/table';
import { useTimeZone } from '../ui/time-zone';

// Each count links to the list it counts; the count's own link repeats the row's, so it stays out of the tab order.
const COUNT_LINK = 'text-sky-800 underline dark:text-sky-300';
// Figures older than two sampler intervals are shown as what they are (the overview never counts them itself).
const STALE_NOTE = [
  'mb-4 rounded-md border-l-4 border-amber-500 bg-amber-50 p-2 text-sm',
  'text-amber-950 dark:bg-amber-950 dark:text-amber-50',
].join(' ');

/** One table of counts under its heading; the heading names the table too. */
function CountSection({
  id,
  title,
  head,
  empty,
  children,
}: {
  id: string;
  title: string;
  head: string[];
  empty: boolean;
  children: ReactNode;
}) {
  return (
    <section aria-labelledby={id}>
      <h2 id={id} className="mb-2 text-sm font-semibold">
        {title}
      </h2>
      <DataTable caption={title} head={head} empty={empty}>
        {children}
      </DataTable>
    </section>
  );
}

/** A row's count, linking where the row's first cell does (so out of the tab order). */
function CountCell({ href, children }: { href: string; children: ReactNode }) {
  return (
    <Cell>
      <Link href={href} tabIndex={-1} className={COUNT_LINK}>
        {children}
      </Link>
    </Cell>
  );
}

/**
 * The overview's counts and charts, prefetched by the page and
 * kept current by live events; `links` come from the server.
 */
export function OverviewView({ links }: { links: OverviewLinks }) {
  const tz = useTimeZone();
  const { data: overview, error } = useQuery(overviewQuery.options());
  // Pending proposals come live from the event stream, not from the 15 s sample.
  const needsYou = useQuery(needsYouQuery.options()).data;
  if (!overview) return <>{error ? <ErrorState detail={error.message} /> : null}</>;
  const total = overview.executionsByStatus.reduce((sum, r) => sum + r.count, 0);
  const deadLetters = overview.deadLettersByReason.reduce((sum, r) => sum + r.count, 0);
  const queueDepth = overview.queue.reduce((sum, r) => sum + r.count, 0);
  return (
    <>
      <PageHeader title="Overview" description={`As of ${tz.format(new Date(overview.serverNow))} (server clock)`} />
      {overview.fresh ? null : (
        <p role="note" className={STALE_NOTE}>
          {overview.sampledAt
            ? `These counts were taken at ${tz.format(new Date(overview.sampledAt))}; ` +
              'the metric sampler has not counted since.'
            : 'Not counted yet: the metric sampler takes the first count shortly after the server starts.'}
        </p>
      )}
      <NeedsYouPanel />
      <section aria-label="Totals" className="grid grid-cols-2 gap-4 lg:grid-cols-5">
        <StatCard label="Executions" value={total.toLocaleString('en-US')} href="/executions" />
        <StatCard
          label="Stale executions"
          value={overview.staleExecutions.toLocaleString('en-US')}
          hint={`no update for over ${Math.round(overview.staleThresholdMs / 60_000)} min`}
          href={links.stale}
        />
        <StatCard
          label="Pending proposals"
          value={needsYou?.pendingProposals ?? overview.pendingProposals}
          href={links.pending}
        />
        <StatCard label="Settlement queue" value={queueDepth.toLocaleString('en-US')} href={links.queue} />
        <StatCard label="Dead letters" value={deadLetters.toLocaleString('en-US')} href="/settlements/dead-letters" />
      </section>
      <RatesLastHour />
      <div className="mt-8 grid gap-6 lg:grid-cols-3">
        <CountSection
          id="by-status"
          title="Executions by status"
          head={['Status', 'Count']}
          empty={overview.executionsByStatus.length === 0}
        >
          {overview.executionsByStatus.map((r) => {
            const href =
              links.executionsByStatus[r.status as keyof OverviewLinks['executionsByStatus']] ?? '/executions';
            return (
              <tr key={r.status}>
                <Cell>
                  <Link href={href} aria-label={`${r.status}: ${r.count.toLocaleString('en-US')} executions`}>
                    <StatusBadge status={r.status} />
                  </Link>
                </Cell>
                <CountCell href={href}>{r.count.toLocaleString('en-US')}</CountCell>
              </tr>
            );
          })}
        </CountSection>
        <CountSection
          id="queue"
          title="Settlement queue by state"
          head={['State', 'Count']}
          empty={overview.queue.length === 0}
        >
          {overview.queue.map((r) => {
            const href = links.queueByState[r.state as keyof OverviewLinks['queueByState']] ?? '/settlements';
            return (
              <tr key={r.state}>
                <Cell>
                  <Link href={href} className={COUNT_LINK}>
                    {r.state}
                  </Link>
                </Cell>
                <CountCell href={href}>{r.count.toLocaleString('en-US')}</CountCell>
              </tr>
            );
          })}
        </CountSection>
        <CountSection
          id="dead"
          title="Dead letters by reason"
          head={['Reason', 'Count']}
          empty={overview.deadLettersByReason.length === 0}
        >
          {overview.deadLettersByReason.map((r) => {
            const href =
              links.deadLettersByReason[r.reason as keyof OverviewLinks['deadLettersByReason']] ??
              '/settlements/dead-letters';
            return (
              <tr key={r.reason}>
                <Cell mono>
                  <Link href={href} className={COUNT_LINK}>
                    {r.reason}
                  </Link>
                </Cell>
                <CountCell href={href}>{r.count}</CountCell>
              </tr>
            );
          })}
        </CountSection>
      </div>
    </>
  );
}
