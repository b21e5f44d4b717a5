import type { ExecutionDetail } from '@/lib/queries/execution-detail-types';
import { TimeAgo } from '../ui/time-ago';

type Decision = ExecutionDetail['decisions'][number];
type Proposal = ExecutionDetail['proposals'][number];

/** The recovery decision the execution still stands at, with the proposal that made it when Keel did. */
export interface TakeoverOutcome {
  decision: Decision;
  proposal: Proposal | null;
  /** Steps the old worker left running: they read so until it notices. */
  runningSteps: string[];
}

/**
 * The takeover the execution's current state comes from, if it does: its newest recovery
 * decision produced the status it still has. Keel's decisions name their proposal
 * (`keel:proposal:<id>`); one the runtime's own tools recorded has no proposal here.
 */
export function takeoverOutcome(
  detail: Pick<ExecutionDetail, 'status' | 'decisions' | 'proposals' | 'steps'>,
): TakeoverOutcome | null {
  const decision = detail.decisions[0];
  if (!decision || decision.resultingStatus !== detail.status) return null;
  const proposal = detail.proposals.find((p) => decision.operatorReference === `keel:proposal:${p.id}`) ?? null;
  const runningSteps = detail.steps
    .filter((s) => s.status === 'STARTED' || s.status === 'STARTING')
    .map((s) => s.logicalId);
  return { decision, proposal, runningSteps };
}

/**
 * What happened and what comes next, in place of the takeover and abandon controls once
 * a takeover is applied: the next thing on the page is an explanation, not a red button.
 */
export function TakeoverOutcomePanel({
  outcome,
  instanceId,
  now,
}: {
  outcome: TakeoverOutcome;
  instanceId: number;
  now: Date;
}) {
  const { decision, proposal, runningSteps } = outcome;
  const failed = decision.resultingStatus === 'FAILED';
  return (
    <section
      aria-labelledby="takeover-outcome"
      className={
        'rounded-lg border border-sky-300 bg-sky-50 p-4 text-sm text-sky-950 dark:border-sky-800 dark:bg-sky-950 ' +
        'dark:text-sky-50'
      }
    >
      <h2 id="takeover-outcome" className="font-semibold">
        Taken over: the execution is {decision.resultingStatus}
      </h2>
      <p className="mt-1">
        {proposal ? (
          <>
            Proposal {proposal.id} (asked by {proposal.proposerLogin}) was confirmed by{' '}
            {proposal.deciderLogin ?? 'an approver'}{' '}
            {proposal.decidedAt ? <TimeAgo at={new Date(proposal.decidedAt)} now={now} /> : null}
          </>
        ) : (
          <>
            Recovery decision {decision.id} ({decision.operatorReference}) was recorded{' '}
            <TimeAgo at={new Date(decision.decidedAt)} now={now} />
          </>
        )}
        : the status moved from {decision.priorStatus} to {decision.resultingStatus} at version{' '}
        {decision.executionVersion + 1}, and the runtime was told with a RECOVER request.
      </p>
      <ul className="mt-2 list-disc space-y-1 pl-5">
        <li>
          <strong>The old worker is fenced out.</strong> Its next write still carries version{' '}
          {decision.executionVersion} and is refused, so it cannot undo this.{' '}
          {runningSteps.length > 0
            ? `Until it notices, step ${runningSteps.join(', ')} still reads STARTED ` +
              'and the owner "another process"; that is expected and needs nothing from you.'
            : 'Until it notices, the owner may still read "another process"; ' +
              'that is expected and needs nothing from you.'}
        </li>
        <li>
          <strong>New owner: none.</strong>{' '}
          {failed
            ? `No process owns a ${decision.resultingStatus} execution. ` +
              `The runtime may restart job instance ${instanceId} as a new attempt, ` +
              `which gets an owner of its own and appears as a new execution.`
            : `No process owns an ABANDONED execution, and job instance ${instanceId} cannot be restarted from it.`}
        </li>
        <li>
          Nothing more is needed here
          {failed ? '; only if the job must never run again does an approver propose abandoning it.' : '.'}
        </li>
      </ul>
    </section>
  );
}
