'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import type { ReactNode } from 'react';
import type { OrchestrationDetail } from '@/lib/queries/orchestration-detail-types';
import { orchestrationDetailQuery } from '@/lib/reads/queries';
import { Fact } from '../ui/fact';
import { PageHeader } from '../ui/page-header';
import { ErrorState } from '../ui/states';
import { StatusBadge } from '../ui/status-badge';
import { Cell, DataTable } from '../ui/table';
import { TimeAgo } from '../ui/time-ago';
import { useTimeZone } from '../ui/time-zone';
import { CompensationTable } from './compensation-table';
import { LINK } from './links';
import { RetryPolicy } from './retry-policy';
import { SnapshotDigests } from './snapshot-digests';
import { TagBadge, TagVerificationNotice } from './tag-verification';
import { WaitCountdown } from './wait-countdown';

const BOX = 'mb-6 rounded-lg border border-zinc-200 bg-white p-4 dark:border-zinc-800 dark:bg-zinc-900';
const WAIT_KINDS = { event: 'event', schedule: 'schedule', human_approval: 'human approval' } as const;

function Section({ id, title, children }: { id: string; title: string; children: ReactNode }) {
  return (
    <section aria-labelledby={id} className={BOX}>
      <h2 id={id} className="mb-3 text-sm font-semibold">
        {title}
      </h2>
      {children}
    </section>
  );
}

function TakeoverState({ detail }: { detail: OrchestrationDetail }) {
  const pending = detail.proposals.find((p) => p.status === 'PENDING');
  if (pending)
    return (
      <Link href={`/recovery/${pending.id}`} className={LINK}>
        Proposal {pending.id} pending
      </Link>
    );
  if (detail.takeoverCandidate)
    return (
      <>
        Candidate: the lease lapsed;{' '}
        <Link href="/recovery#orchestrations" className={LINK}>
          request a takeover on Recovery
        </Link>
      </>
    );
  if (detail.lease.expired) return <>Not a candidate: the lease lapsed, but its tag does not verify</>;
  return <>Not a candidate: the lease is live</>;
}

/** One orchestration's checkpoint, prefetched by the page and kept current by live events. */
export function OrchestrationView({ executionId }: { executionId: string }) {
  const tz = useTimeZone();
  const { data: detail, error } = useQuery(orchestrationDetailQuery.options({ id: executionId }));
  if (!detail) return error ? <ErrorState detail={error.message} /> : null;
  const now = new Date(detail.serverNow);
  const checkpoint = detail.checkpoint;
  return (
    <>
      <p className="mb-2 text-sm">
        <Link href="/recovery#orchestrations" className={LINK}>
          Orchestration leases
        </Link>
      </p>
      <PageHeader
        title={`Orchestration ${detail.executionId}`}
        description={checkpoint ? `Durable checkpoint governed by ${checkpoint.governingSpec}` : 'Durable checkpoint'}
      >
        <TagBadge verification={detail.verification} />
      </PageHeader>
      <TagVerificationNotice verification={detail.verification} hasCheckpoint={checkpoint !== null} />
      <section aria-label="Lease" className={BOX}>
        <dl className="grid grid-cols-2 gap-4 md:grid-cols-4">
          <Fact label="Lease owner">
            <span className="[overflow-wrap:anywhere]">{detail.lease.ownerId}</span>
          </Fact>
          <Fact label="Fencing token">{detail.lease.fencingToken.toLocaleString('en-US')}</Fact>
          <Fact label="Lease expires">
            <TimeAgo at={new Date(detail.lease.expiresAt)} now={now} />
            {detail.lease.expired ? (
              <span className="ml-2 text-xs font-medium text-amber-800 dark:text-amber-300">lapsed</span>
            ) : null}
          </Fact>
          <Fact label="Takeover">
            <TakeoverState detail={detail} />
          </Fact>
          <Fact label="Last saved">
            <TimeAgo at={new Date(detail.updatedAt)} now={now} />
          </Fact>
        </dl>
      </section>
      {checkpoint ? (
        <>
          <Section id="wait" title="Wait">
            {checkpoint.wait ? (
              <dl className="grid grid-cols-2 gap-4 md:grid-cols-4">
                <Fact label="Kind">{WAIT_KINDS[checkpoint.wait.kind]}</Fact>
                <Fact label="Owner">
                  <span className="[overflow-wrap:anywhere]">{checkpoint.wait.ownerId}</span>
                </Fact>
                <Fact label="Deadline">
                  <WaitCountdown deadline={checkpoint.wait.deadline} serverNow={detail.serverNow} />
                </Fact>
                <Fact label="Cancellation id">
                  <span className="font-mono text-xs [overflow-wrap:anywhere]">{checkpoint.wait.cancellationId}</span>
                </Fact>
              </dl>
            ) : (
              <p className="text-sm">Not waiting.</p>
            )}
          </Section>
          <Section id="completed-nodes" title={`Completed nodes (${checkpoint.completedNodeIds.length})`}>
            {checkpoint.completedNodeIds.length > 0 ? (
              <ol aria-label="Completed nodes" className="flex flex-wrap gap-2 text-sm">
                {checkpoint.completedNodeIds.map((node, index) => (
                  <li
                    // biome-ignore lint/suspicious/noArrayIndexKey: a fixed, ordered list in which a node may repeat
                    key={`${index}-${node}`}
                    className={
                      'rounded border border-zinc-300 px-2 py-0.5 font-mono text-xs [overflow-wrap:anywhere] ' +
                      'dark:border-zinc-700'
                    }
                  >
                    <span className="text-zinc-600 dark:text-zinc-400">{index + 1}.</span> {node}
                  </li>
                ))}
              </ol>
            ) : (
              <p className="text-sm">None yet.</p>
            )}
          </Section>
          <Section id="retry-policy" title="Retry policy">
            <RetryPolicy retry={checkpoint.retry} />
          </Section>
          <Section id="compensation" title="Compensation">
            <CompensationTable steps={checkpoint.compensation} authorized={checkpoint.compensationAuthorized} />
          </Section>
          <Section id="snapshots" title="Governing snapshots">
            <SnapshotDigests snapshots={checkpoint.snapshots} />
          </Section>
        </>
      ) : null}
      <section aria-labelledby="orchestration-proposals" className="mb-6">
        <h2 id="orchestration-proposals" className="mb-2 text-sm font-semibold">
          Proposals
        </h2>
        <DataTable
          caption="Proposals for this orchestration"
          head={['Proposal', 'Status', 'Proposed by', tz.heading('Created', now)]}
          empty={detail.proposals.length === 0 ? 'No proposal has targeted it.' : false}
        >
          {detail.proposals.map((p) => (
            <tr key={p.id}>
              <Cell mono>
                <Link href={`/recovery/${p.id}`} className={LINK}>
                  {p.id}
                </Link>
              </Cell>
              <Cell>
                <StatusBadge status={p.status} />
              </Cell>
              <Cell>{p.proposerLogin}</Cell>
              <Cell>
                <TimeAgo at={new Date(p.createdAt)} now={now} column />
              </Cell>
            </tr>
          ))}
        </DataTable>
      </section>
    </>
  );
}
