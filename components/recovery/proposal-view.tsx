'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { can, mayCancelProposal, type Role } from '@/lib/domain/roles';
import { proposalDetailQuery } from '@/lib/reads/queries';
import { orchestrationHref } from '../orchestrations/links';
import { CopyButton } from '../ui/copy-button';
import { Fact } from '../ui/fact';
import { PageHeader } from '../ui/page-header';
import { ErrorState } from '../ui/states';
import { StatusBadge } from '../ui/status-badge';
import { TimeAgo } from '../ui/time-ago';
import { DeadlineCountdown } from './deadline-countdown';
import { EvidenceSummary } from './evidence-summary';
import { EvidenceTable } from './evidence-table';
import { ProposalDecision } from './proposal-decision';

const LINK = 'text-sky-800 underline dark:text-sky-300';

/** A proposal as an approver weighs it, prefetched by the page and kept current by live events. */
export function ProposalView({
  id,
  actor,
  settings,
}: {
  id: number;
  actor: { id: string; role: Role };
  settings: { staleThresholdMs: number; maxClockSkewMs: number };
}) {
  const { data: proposal, error } = useQuery(proposalDetailQuery.options({ id }));
  if (!proposal) return error ? <ErrorState detail={error.message} /> : null;
  const now = new Date(proposal.serverNow);
  const targetHref =
    proposal.targetKind === 'batch' ? `/executions/${proposal.targetId}` : orchestrationHref(proposal.targetId);
  const targetNoun = proposal.targetKind === 'batch' ? 'execution' : 'orchestration';
  return (
    <>
      <p className="mb-2 text-sm">
        <Link href="/recovery" className={LINK}>
          Recovery
        </Link>
      </p>
      <PageHeader title={`Proposal ${proposal.id}`} description={`Takeover of ${targetNoun} ${proposal.targetId}`}>
        <StatusBadge status={proposal.status} />
      </PageHeader>
      <ProposalDecision
        proposal={proposal}
        canDecide={can(actor.role, 'decideRecovery')}
        canCancel={mayCancelProposal(actor, proposal.proposerId)}
        ownProposal={proposal.proposerId === actor.id}
      />
      <section
        aria-label="Proposal"
        className="mb-6 rounded-lg border border-zinc-200 bg-white p-4 dark:border-zinc-800 dark:bg-zinc-900"
      >
        <dl className="grid grid-cols-2 gap-4 md:grid-cols-3">
          <Fact label="Target">
            <Link href={targetHref} className={LINK}>
              {proposal.targetKind} {proposal.targetId}
            </Link>
          </Fact>
          <Fact label="Reason for the request">
            {proposal.note ?? <span className="text-zinc-600 dark:text-zinc-400">no reason given</span>}
          </Fact>
          <Fact label="Proposed by">
            {proposal.proposerLogin}, <TimeAgo at={new Date(proposal.createdAt)} now={now} />
          </Fact>
          <Fact label="Approval deadline">
            {proposal.status === 'PENDING' ? (
              <DeadlineCountdown deadline={proposal.deadline} serverNow={proposal.serverNow} />
            ) : (
              <>No longer running: the proposal is {proposal.status}.</>
            )}
          </Fact>
          {proposal.expectedVersion !== null ? <Fact label="Observed version">{proposal.expectedVersion}</Fact> : null}
          {proposal.expectedFencingToken !== null ? (
            <Fact label="Observed fencing token">{proposal.expectedFencingToken}</Fact>
          ) : null}
          {proposal.successorOwner ? <Fact label="Successor owner">{proposal.successorOwner}</Fact> : null}
          {proposal.decidedAt ? (
            <Fact label="Decided">
              {proposal.deciderLogin ?? 'deadline'}, <TimeAgo at={new Date(proposal.decidedAt)} now={now} />
            </Fact>
          ) : null}
          {proposal.resultingStatus ? (
            <Fact label="Result">
              {proposal.resultingStatus}
              {proposal.failureCategory ? ` (${proposal.failureCategory})` : ''}
            </Fact>
          ) : null}
          {proposal.reason ? <Fact label="Reason">{proposal.reason}</Fact> : null}
        </dl>
      </section>
      <section
        aria-labelledby="evidence"
        className="rounded-lg border border-zinc-200 bg-white p-4 dark:border-zinc-800 dark:bg-zinc-900"
      >
        <h2 id="evidence" className="mb-3 text-sm font-semibold">
          Evidence
        </h2>
        {proposal.evidenceView ? (
          <EvidenceSummary
            view={proposal.evidenceView}
            now={now}
            stepName={proposal.latestStepName}
            settings={settings}
            successorOwner={proposal.successorOwner}
          />
        ) : null}
        <div className="mt-5">
          <div className="text-xs font-medium uppercase tracking-wide text-zinc-600 dark:text-zinc-400">
            Evidence digest
          </div>
          <div className="mt-0.5 flex flex-wrap items-center">
            <code data-testid="evidence-digest" className="break-all font-mono text-sm">
              {proposal.evidenceDigest}
            </code>
            <CopyButton value={proposal.evidenceDigest} label="Copy evidence digest" />
          </div>
        </div>
        <EvidenceTable evidence={proposal.evidence} view={proposal.evidenceView} digest={proposal.evidenceDigest} />
      </section>
    </>
  );
}
