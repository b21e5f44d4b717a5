'use client';

import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { proposeTakeover, requestExecutionStop } from '@/app/actions/recovery';
import { queryKeys } from '@/lib/query-keys';
import { useServerAction } from '../actions/use-server-action';
import { Button } from '../ui/button';
import { ConfirmDialog } from '../ui/confirm-dialog';

export interface ExecutionActionsProps {
  executionId: number;
  status: string;
  canPropose: boolean;
  canStop: boolean;
  candidacy: { candidate: boolean; code: string | null; message: string | null };
  stopRequested: boolean;
  pendingProposalId: number | null;
}

const ACTIVE = ['STARTING', 'STARTED', 'STOPPING'];

export function ExecutionActions(props: ExecutionActionsProps) {
  const router = useRouter();
  const [dialog, setDialog] = useState<'takeover' | 'stop' | null>(null);
  const propose = useServerAction(proposeTakeover, {
    success: (v) => (v.created ? `Proposal ${v.proposalId} created` : `Proposal ${v.proposalId} was already pending`),
    invalidate: [queryKeys.proposals.all, queryKeys.executions.all],
    onSuccess: (v) => router.push(`/recovery/${v.proposalId}`),
  });
  const stop = useServerAction(requestExecutionStop, { success: () => 'Stop requested', invalidate: [queryKeys.executions.all] });
  const stoppable = ACTIVE.includes(props.status) && !props.stopRequested;

  return (
    <section aria-label="Actions" className="mb-6 flex flex-wrap items-center gap-3">
      {props.pendingProposalId ? (
        <a href={`/recovery/${props.pendingProposalId}`} className="text-sm font-medium text-sky-800 underline dark:text-sky-300">
          Proposal {props.pendingProposalId} is pending approval
        </a>
      ) : null}
      {props.canPropose && !props.pendingProposalId ? (
        props.candidacy.candidate ? (
          <Button variant="primary" onClick={() => setDialog('takeover')}>
            Request takeover
          </Button>
        ) : (
          <p className="text-sm text-zinc-700 dark:text-zinc-300" data-testid="not-candidate">
            Not a takeover candidate: <span className="font-mono text-xs">{props.candidacy.code}</span> — {props.candidacy.message}
          </p>
        )
      ) : null}
      {props.canStop && stoppable ? (
        <Button onClick={() => setDialog('stop')}>Request stop</Button>
      ) : null}
      <ConfirmDialog
        open={dialog === 'takeover'}
        title={`Request takeover of execution ${props.executionId}`}
        confirmLabel="Create proposal"
        pending={propose.pending}
        onClose={() => setDialog(null)}
        onConfirm={async () => {
          const result = await propose.execute({ target: 'batch', executionId: props.executionId });
          if (result.ok) setDialog(null);
        }}
      >
        <p>
          This records a recovery proposal bound to the execution&apos;s current evidence. Nothing changes on the execution until a
          different approver confirms it; if the execution changes first, the proposal is superseded.
        </p>
      </ConfirmDialog>
      <ConfirmDialog
        open={dialog === 'stop'}
        title={`Request stop of execution ${props.executionId}`}
        confirmLabel="Request stop"
        tone="danger"
        pending={stop.pending}
        onClose={() => setDialog(null)}
        onConfirm={async () => {
          const result = await stop.execute({ executionId: props.executionId });
          if (result.ok) setDialog(null);
        }}
      >
        <p>
          This sets a stop request on the execution (your name and the time). The runtime stops it at its next safe point; Keel
          itself does not interrupt anything.
        </p>
      </ConfirmDialog>
    </section>
  );
}
