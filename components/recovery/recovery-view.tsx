'use client';

import { keepPreviousData, useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useQueryStates } from 'nuqs';
import { PROPOSAL_STATUSES } from '@/lib/domain/proposal-status';
import { orchestrationLeasesQuery, proposalListQuery } from '@/lib/reads/queries';
import { recoveryHref, recoverySearch } from '@/lib/url-state/recovery';
import { ErrorState } from '../ui/states';
import { StatusBadge } from '../ui/status-badge';
import { useCalmRows } from '../ui/calm-rows';
import { Cell, DataTable } from '../ui/table';
import { formatRelative, TimeAgo } from '../ui/time-ago';
import { useTimeZone } from '../ui/time-zone';
import { orchestrationHref } from '../orchestrations/links';
import { OrchestrationTakeoverButton } from './orchestration-takeover-button';

const tab =
  'rounded-md border border-zinc-300 px-2 py-1 aria-[current=page]:bg-zinc-900 aria-[current=page]:text-white ' +
  'dark:border-zinc-700 dark:aria-[current=page]:bg-zinc-100 dark:aria-[current=page]:text-zinc-900';
const LINK = 'text-sky-800 underline dark:text-sky-300';
// Orchestration ids and owner names are the runtime's own and can be
// long: they break anywhere rather than push the actions out of view.
const ID_CELL = 'min-w-32 max-w-64 px-3 py-2 [overflow-wrap:anywhere]';

/** Proposals by status and orchestration leases; the status and cursor live in the URL. */
export function RecoveryView({ canPropose }: { canPropose: boolean }) {
  const tz = useTimeZone();
  const [search] = useQueryStates(recoverySearch, { history: 'push' });
  const params = { status: search.status, cursor: search.cursor };
  const proposals = useQuery({ ...proposalListQuery.options(params), placeholderData: keepPreviousData });
  const leases = useQuery(orchestrationLeasesQuery.options());
  // Rows being read stay put; newer ones wait behind "Updates waiting".
  const [proposalPage, proposalsCalm] = useCalmRows(
    proposals,
    params,
    (page) => page.items,
    (p) => p.id,
  );
  const [leasePage, leasesCalm] = useCalmRows(
    leases,
    null,
    (page) => page.items,
    (l) => l.executionId,
  );
  const now = new Date(proposalPage?.serverNow ?? leasePage?.serverNow ?? 0);
  const status = search.status;
  return (
    <>
      {proposals.error ? <ErrorState detail={proposals.error.message} /> : null}
      <section aria-labelledby="proposals" className="mb-8">
        <h2 id="proposals" className="mb-2 text-sm font-semibold">
          Proposals
        </h2>
        <nav aria-label="Filter proposals by status" className="mb-3 flex flex-wrap gap-2 text-sm">
          <Link href={recoveryHref({})} aria-current={!status ? 'page' : undefined} className={tab}>
            All
          </Link>
          {PROPOSAL_STATUSES.map((s) => (
            <Link
              key={s}
              href={recoveryHref({ status: s })}
              aria-current={status === s ? 'page' : undefined}
              className={tab}
            >
              {s}
            </Link>
          ))}
        </nav>
        <DataTable
          caption="Recovery proposals"
          head={[
            'Proposal',
            'Target',
            'Status',
            'Proposed by',
            tz.heading('Created', now),
            tz.heading('Deadline', now),
            'Decided by',
          ]}
          empty={proposalPage?.items.length === 0}
          calm={proposalsCalm}
        >
          {proposalPage?.items.map((p) => (
            <tr key={p.id}>
              <Cell mono>
                <Link href={`/recovery/${p.id}`} prefetch={false} className={LINK}>
                  {p.id}
                </Link>
              </Cell>
              <Cell>
                {p.targetKind} {p.targetId}
              </Cell>
              <Cell>
                <StatusBadge status={p.status} />
              </Cell>
              <Cell>{p.proposerLogin}</Cell>
              <Cell>
                <TimeAgo at={new Date(p.createdAt)} now={now} column />
              </Cell>
              <Cell>
                <TimeAgo at={new Date(p.deadline)} now={now} column />
              </Cell>
              <Cell>{p.deciderLogin ?? '—'}</Cell>
            </tr>
          ))}
        </DataTable>
        {proposalPage?.nextCursor ? (
          <Link
            href={recoveryHref({ status, cursor: proposalPage.nextCursor })}
            className={`mt-3 inline-block text-sm font-medium ${LINK}`}
          >
            Older proposals
          </Link>
        ) : null}
      </section>
      <section aria-labelledby="orchestrations-heading" id="orchestrations">
        <h2 id="orchestrations-heading" className="mb-2 text-sm font-semibold">
          Orchestration leases
        </h2>
        {leases.error ? <ErrorState detail={leases.error.message} /> : null}
        <DataTable
          caption="Orchestration leases"
          head={['Orchestration', 'Owner', 'Fencing token', tz.heading('Lease expires', now), 'Authentication', '']}
          empty={leasePage?.items.length === 0}
          calm={leasesCalm}
        >
          {leasePage?.items.map((l) => (
            <tr key={l.executionId}>
              <td className={`${ID_CELL} font-mono text-xs`}>
                <Link href={orchestrationHref(l.executionId)} prefetch={false} className={LINK}>
                  {l.executionId}
                </Link>
              </td>
              <td className={ID_CELL}>{l.leaseOwner}</td>
              <Cell>{l.fencingToken}</Cell>
              {/* Relative time, then the time on a line of its own: the row keeps its actions in view at 1440 px. */}
              <td className="px-3 py-2">
                <span className="block whitespace-nowrap">
                  {formatRelative(new Date(l.expiresAt), now)}
                  {l.expired ? (
                    <span className="ml-2 text-xs font-medium text-amber-800 dark:text-amber-300">lapsed</span>
                  ) : null}
                </span>
                <time
                  dateTime={l.expiresAt}
                  className="block whitespace-nowrap text-xs text-zinc-500 dark:text-zinc-400"
                >
                  {tz.inColumn(new Date(l.expiresAt), now)}
                </time>
              </td>
              <Cell>
                {l.authenticated ? (
                  'verified'
                ) : (
                  <span className="font-medium text-red-800 dark:text-red-300">does not verify</span>
                )}
              </Cell>
              <Cell>
                {l.pendingProposalId ? (
                  <Link href={`/recovery/${l.pendingProposalId}`} prefetch={false} className={LINK}>
                    Proposal {l.pendingProposalId} pending
                  </Link>
                ) : canPropose && l.expired && l.authenticated ? (
                  <OrchestrationTakeoverButton
                    executionId={l.executionId}
                    leaseOwner={l.leaseOwner}
                    fencingToken={l.fencingToken}
                  />
                ) : null}
              </Cell>
            </tr>
          ))}
        </DataTable>
      </section>
    </>
  );
}
