import type { Metadata } from 'next';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { DeadlineCountdown } from '@/components/recovery/deadline-countdown';
import { EvidenceTable } from '@/components/recovery/evidence-table';
import { ProposalDecision } from '@/components/recovery/proposal-decision';
import { Fact } from '@/components/ui/fact';
import { PageHeader } from '@/components/ui/page-header';
import { StatusBadge } from '@/components/ui/status-badge';
import { TimeAgo } from '@/components/ui/time-ago';
import { can, mayCancelProposal } from '@/lib/auth/roles';
import { idPathSchema } from '@/lib/domain/path-segment';
import { readProposal } from '@/lib/queries/recovery';
import { runtime } from '@/lib/server/runtime';
import { page } from '@/lib/server/page';

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  return { title: `Proposal ${(await params).id}` };
}

const MARKERS: { key: 'unknownCommit' | 'completedPartition' | 'committedFlowDecision' | 'ambiguousExternalEffect'; text: string }[] = [
  { key: 'unknownCommit', text: 'Unknown commit: the last commit may or may not have happened.' },
  { key: 'completedPartition', text: 'A partition of this execution has completed.' },
  { key: 'committedFlowDecision', text: 'A flow decision has been committed.' },
  { key: 'ambiguousExternalEffect', text: 'Ambiguous external effect: the job does not declare atomic same-resource delivery.' },
];


export default page('read', { params: idPathSchema }, async function ProposalPage({ actor, params }) {
  const proposal = await readProposal(runtime().db, params.id);
  if (!proposal) notFound();
  const now = new Date(proposal.serverNow);
  const warnings = MARKERS.filter((m) => proposal.markers?.[m.key]);
  const targetHref = proposal.targetKind === 'batch' ? `/executions/${proposal.targetId}` : '/recovery#orchestrations';
  return (
    <>
      <p className="mb-2 text-sm">
        <Link href="/recovery" className="text-sky-800 underline dark:text-sky-300">Recovery</Link>
      </p>
      <PageHeader title={`Proposal ${proposal.id}`} description={`Takeover of ${proposal.targetKind === 'batch' ? 'execution' : 'orchestration'} ${proposal.targetId}`}>
        <StatusBadge status={proposal.status} />
      </PageHeader>
      <ProposalDecision
        proposal={proposal}
        canDecide={can(actor.role, 'decideRecovery')}
        canCancel={mayCancelProposal(actor, proposal.proposerId)}
      />
      {warnings.length > 0 ? (
        <section aria-label="Warnings" className="mb-6 space-y-2">
          {warnings.map((w) => (
            <p key={w.key} className="rounded-md border-l-4 border-amber-500 bg-amber-50 p-2 text-sm text-amber-950 dark:bg-amber-950 dark:text-amber-50">
              {w.text}
            </p>
          ))}
        </section>
      ) : null}
      <section aria-label="Proposal" className="mb-6 rounded-lg border border-zinc-200 bg-white p-4 dark:border-zinc-800 dark:bg-zinc-900">
        <dl className="grid grid-cols-2 gap-4 md:grid-cols-3">
          <Fact label="Target"><Link href={targetHref} className="text-sky-800 underline dark:text-sky-300">{proposal.targetKind} {proposal.targetId}</Link></Fact>
          <Fact label="Proposed by">{proposal.proposerLogin}, <TimeAgo at={new Date(proposal.createdAt)} now={now} /></Fact>
          <Fact label="Approval deadline">{proposal.status === 'PENDING' ? <DeadlineCountdown deadline={proposal.deadline} serverNow={proposal.serverNow} /> : <TimeAgo at={new Date(proposal.deadline)} now={now} />}</Fact>
          {proposal.expectedVersion !== null ? <Fact label="Observed version">{proposal.expectedVersion}</Fact> : null}
          {proposal.expectedFencingToken !== null ? <Fact label="Observed fencing token">{proposal.expectedFencingToken}</Fact> : null}
          {proposal.successorOwner ? <Fact label="Successor owner">{proposal.successorOwner}</Fact> : null}
          {proposal.decidedAt ? <Fact label="Decided">{proposal.deciderLogin ?? 'deadline'}, <TimeAgo at={new Date(proposal.decidedAt)} now={now} /></Fact> : null}
          {proposal.resultingStatus ? <Fact label="Result">{proposal.resultingStatus}{proposal.failureCategory ? ` (${proposal.failureCategory})` : ''}</Fact> : null}
          {proposal.reason ? <Fact label="Reason">{proposal.reason}</Fact> : null}
        </dl>
        <div className="mt-4">
          <div className="text-xs font-medium uppercase tracking-wide text-zinc-600 dark:text-zinc-400">Evidence digest</div>
          <code data-testid="evidence-digest" className="mt-0.5 block break-all font-mono text-sm">{proposal.evidenceDigest}</code>
        </div>
      </section>
      <section aria-labelledby="evidence">
        <h2 id="evidence" className="mb-2 text-sm font-semibold">Evidence</h2>
        <EvidenceTable evidence={proposal.evidence} />
      </section>
    </>
  );
});
