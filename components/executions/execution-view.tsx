'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { can, type Role } from '@/lib/domain/roles';
import type { DeepLinks } from '@/lib/domain/deep-links';
import { auditTargetFilterHref } from '@/lib/url-state/audit';
import { retryKeysHref } from '@/lib/url-state/retry-keys';
import { executionDetailQuery } from '@/lib/reads/queries';
import { Fact } from '../ui/fact';
import { PageHeader } from '../ui/page-header';
import { RelatedLinks } from '../ui/related-links';
import { ErrorState } from '../ui/states';
import { StaleBadge, StatusBadge } from '../ui/status-badge';
import { Cell, DataTable } from '../ui/table';
import { TimeAgo } from '../ui/time-ago';
import { ExecutionActions } from './execution-actions';
import { OperatorHistoryTable } from './operator-history-table';
import { StepsTable } from './steps-table';
import { takeoverOutcome } from './takeover-outcome';

/** An execution's detail, prefetched by the page and kept current by live events and actions. */
export function ExecutionView({ id, role, links }: { id: number; role: Role; links: DeepLinks }) {
  const { data: detail, error } = useQuery(executionDetailQuery.options({ id }));
  if (!detail) return error ? <ErrorState detail={error.message} /> : null;
  const canPropose = can(role, 'proposeRecovery');
  const pendingProposalId = detail.proposals.find((p) => p.status === 'PENDING')?.id ?? null;
  const candidacy = detail.candidacy;
  const now = new Date(detail.serverNow);
  const takenOver = takeoverOutcome(detail);
  const at = (value: string | null) => (value ? <TimeAgo at={new Date(value)} now={now} /> : '—');
  return (
    <>
      <p className="mb-2 text-sm">
        <Link href="/executions" className="text-sky-800 underline dark:text-sky-300">
          Executions
        </Link>
      </p>
      <PageHeader
        title={`Execution ${detail.id}`}
        description={`${detail.jobName} · attempt ${detail.attempt} · version ${detail.version}`}
      >
        <div className="flex items-center gap-2">
          <StatusBadge status={detail.status} />
          {detail.stale ? <StaleBadge /> : null}
        </div>
      </PageHeader>
      <ExecutionActions
        executionId={detail.id}
        status={detail.status}
        canPropose={canPropose}
        canStop={can(role, 'requestStop')}
        canAbandon={can(role, 'abandonExecution')}
        hasRecoveryDecision={detail.decisions.length > 0}
        candidacy={candidacy}
        stopRequested={detail.stopRequest !== null}
        pendingProposalId={pendingProposalId}
        takeover={takenOver ? { outcome: takenOver, instanceId: detail.instanceId, now } : null}
      />
      <RelatedLinks
        label={`Related to execution ${detail.id}`}
        links={[
          { href: retryKeysHref({ execution: detail.id }), text: 'Retry keys of this execution' },
          { href: '#history', text: 'Recovery history and proposals' },
          {
            href: auditTargetFilterHref('batch_execution', String(detail.id)),
            text: 'Audit events for this execution',
          },
        ]}
        external={links}
        className="mb-6"
      />
      <section
        aria-label="Summary"
        className="mb-8 rounded-lg border border-zinc-200 bg-white p-4 dark:border-zinc-800 dark:bg-zinc-900"
      >
        <dl className="grid grid-cols-2 gap-4 md:grid-cols-4">
          <Fact label="Job">
            {detail.jobName} (revision {detail.definitionRevision})
          </Fact>
          <Fact label="Delivery mode">{detail.deliveryMode ?? 'not declared (treated as ambiguous)'}</Fact>
          <Fact label="Job instance">{detail.instanceId}</Fact>
          <Fact label="Owner">
            {detail.owner === 'ABSENT'
              ? 'none'
              : detail.owner === 'CURRENT_PROCESS'
                ? 'this process'
                : 'another process'}
          </Fact>
          <Fact label="Created">{at(detail.createdAt)}</Fact>
          <Fact label="Started">{at(detail.startedAt)}</Fact>
          <Fact label="Ended">{at(detail.endedAt)}</Fact>
          <Fact label="Last update">{at(detail.updatedAt)}</Fact>
          <Fact label="Exit code">{detail.exitCode ?? '—'}</Fact>
          <Fact label="Failure category">{detail.failureCategory ?? '—'}</Fact>
          <Fact label="Stop request">
            {detail.stopRequest ? (
              <>
                by {detail.stopRequest.by}, {at(detail.stopRequest.at)}
              </>
            ) : (
              'none'
            )}
          </Fact>
        </dl>
      </section>
      <section aria-labelledby="steps" className="mb-8">
        <h2 id="steps" className="mb-2 text-sm font-semibold">
          Steps
        </h2>
        <StepsTable steps={detail.steps} keysHref={retryKeysHref({ execution: detail.id })} />
      </section>
      <section aria-labelledby="operator-history" className="mb-8">
        <h2 id="operator-history" className="mb-1 text-sm font-semibold">
          Operator history
        </h2>
        <p className="mb-2 text-xs text-zinc-600 dark:text-zinc-400">
          Requests the runtime recorded for this execution, from Keel and from the runtime’s own CLI.
        </p>
        <OperatorHistoryTable requests={detail.operatorRequests} now={now} />
      </section>
      <section aria-labelledby="history" className="mb-8">
        <h2 id="history" className="mb-2 text-sm font-semibold">
          Recovery history
        </h2>
        <DataTable
          caption="Recovery decisions"
          head={['Decision', 'Version', 'From', 'To', 'Reason', 'Reference', 'Evidence digest', 'Decided']}
          empty={detail.decisions.length === 0}
        >
          {detail.decisions.map((d) => (
            <tr key={d.id}>
              <Cell mono>{d.id}</Cell>
              <Cell>{d.executionVersion}</Cell>
              <Cell>
                <StatusBadge status={d.priorStatus} />
              </Cell>
              <Cell>
                <StatusBadge status={d.resultingStatus} />
              </Cell>
              <Cell mono>{d.reasonCode}</Cell>
              <Cell mono>{d.operatorReference}</Cell>
              <Cell mono>
                <span title={d.evidenceDigest}>{d.evidenceDigest.slice(0, 16)}…</span>
              </Cell>
              <Cell>{at(d.decidedAt)}</Cell>
            </tr>
          ))}
        </DataTable>
        <div className="mt-4">
          <DataTable
            caption="Recovery proposals"
            head={['Proposal', 'Status', 'Proposed by', 'Decided by', 'Result', 'Created']}
            empty={detail.proposals.length === 0}
          >
            {detail.proposals.map((p) => (
              <tr key={p.id}>
                <Cell mono>
                  <Link href={`/recovery/${p.id}`} className="text-sky-800 underline dark:text-sky-300">
                    {p.id}
                  </Link>
                </Cell>
                <Cell>
                  <StatusBadge status={p.status} />
                </Cell>
                <Cell>{p.proposerLogin}</Cell>
                <Cell>{p.deciderLogin ?? '—'}</Cell>
                <Cell>{p.resultingStatus ?? '—'}</Cell>
                <Cell>{at(p.createdAt)}</Cell>
              </tr>
            ))}
          </DataTable>
        </div>
      </section>
      <section aria-labelledby="audit">
        <h2 id="audit" className="mb-2 text-sm font-semibold">
          Audit trail
        </h2>
        <DataTable
          caption="Audit trail"
          head={['When', 'Actor', 'Role', 'Action', 'Outcome', 'Reason']}
          empty={detail.audit.length === 0}
        >
          {detail.audit.map((a) => (
            <tr key={a.id}>
              <Cell>{at(a.at)}</Cell>
              <Cell>{a.actorLogin}</Cell>
              <Cell>{a.actorRole}</Cell>
              <Cell mono>{a.action}</Cell>
              <Cell>
                <StatusBadge status={a.outcome} />
                {a.code ? <span className="ml-2 font-mono text-xs">{a.code}</span> : null}
              </Cell>
              <Cell>{a.reason ?? '—'}</Cell>
            </tr>
          ))}
        </DataTable>
      </section>
    </>
  );
}
