'use client';

import { STOP_REQUESTABLE_STATUSES } from '@/lib/domain/batch-status';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { proposeExecutionAbandon, proposeTakeover, requestExecutionStop } from '@/app/actions/recovery';
import { queryKeys } from '@/lib/query-keys';
import { useServerAction } from '../actions/use-server-action';
import { Button } from '../ui/button';
import { ConfirmDialog } from '../ui/confirm-dialog';
import { reasonError, RequestReasonField } from '../recovery/request-reason-field';
import { newOperationId } from '../users/operation-id';
import { TakeoverOutcomePanel, type TakeoverOutcome } from './takeover-outcome';

export interface ExecutionActionsProps {
  executionId: number;
  status: string;
  canPropose: boolean;
  canStop: boolean;
  /** Approver or admin: may propose abandoning the execution (another person confirms). */
  canAbandon: boolean;
  /** Whether a recovery decision exists: an UNKNOWN execution may be abandoned only after one. */
  hasRecoveryDecision: boolean;
  candidacy: { candidate: boolean; code: string | null; message: string | null };
  stopRequested: boolean;
  pendingProposalId: number | null;
  /** Set when the execution stands at an applied takeover: an explanation replaces the takeover and abandon buttons. */
  takeover: { outcome: TakeoverOutcome; instanceId: number; now: Date } | null;
}

/** The runtime's STOP takes effect on these; on STOPPING or a finished execution it changes nothing. */

export function ExecutionActions(props: ExecutionActionsProps) {
  const router = useRouter();
  const [dialog, setDialog] = useState<'takeover' | 'stop' | 'abandon' | null>(null);
  // The stop request's idempotency key, made when its dialog opens: a double submit is one request.
  const [stopOperationId, setStopOperationId] = useState('');
  const [takeoverReason, setTakeoverReason] = useState('');
  const [abandonReason, setAbandonReason] = useState('');
  const propose = useServerAction(proposeTakeover, {
    success: (v) => (v.created ? `Proposal ${v.proposalId} created` : `Proposal ${v.proposalId} was already pending`),
    invalidate: [queryKeys.proposals.all, queryKeys.executions.all],
    onSuccess: (v) => router.push(`/recovery/${v.proposalId}`),
    shownInline: (refusal) => reasonError(refusal) !== undefined,
  });
  const stop = useServerAction(requestExecutionStop, {
    success: (v) => (v.changed ? 'Stop requested' : 'Stop already requested; nothing changed'),
    invalidate: [queryKeys.executions.all],
  });
  const abandon = useServerAction(proposeExecutionAbandon, {
    success: (v) =>
      v.created ? `Abandon proposal ${v.proposalId} created` : `Abandon proposal ${v.proposalId} was already pending`,
    invalidate: [queryKeys.proposals.all, queryKeys.executions.all],
    onSuccess: (v) => router.push(`/recovery/${v.proposalId}`),
    shownInline: (refusal) => reasonError(refusal, 'note') !== undefined,
  });
  const stoppable = (STOP_REQUESTABLE_STATUSES as readonly string[]).includes(props.status) && !props.stopRequested;
  const abandonable =
    props.status === 'STOPPED' ||
    props.status === 'FAILED' ||
    (props.status === 'UNKNOWN' && props.hasRecoveryDecision);

  const abandonButton =
    props.canAbandon && abandonable && !props.pendingProposalId ? (
      <Button
        variant="danger"
        onClick={() => {
          setAbandonReason('');
          setDialog('abandon');
        }}
      >
        Propose abandon
      </Button>
    ) : null;

  return (
    <section aria-label="Actions" className="mb-6 flex flex-wrap items-center gap-3">
      {props.takeover ? (
        <div className="basis-full space-y-3">
          <TakeoverOutcomePanel
            outcome={props.takeover.outcome}
            instanceId={props.takeover.instanceId}
            now={props.takeover.now}
          />
          {abandonButton ? (
            <details className="text-sm">
              <summary className="cursor-pointer font-medium">More actions</summary>
              <div className="mt-2">{abandonButton}</div>
            </details>
          ) : null}
        </div>
      ) : null}
      {props.pendingProposalId ? (
        <a
          href={`/recovery/${props.pendingProposalId}`}
          className="text-sm font-medium text-sky-800 underline dark:text-sky-300"
        >
          Proposal {props.pendingProposalId} is pending approval
        </a>
      ) : null}
      {props.canPropose && !props.pendingProposalId && !props.takeover ? (
        props.candidacy.candidate ? (
          <Button
            variant="primary"
            onClick={() => {
              setTakeoverReason('');
              setDialog('takeover');
            }}
          >
            Request takeover
          </Button>
        ) : (
          <p className="text-sm text-zinc-700 dark:text-zinc-300" data-testid="not-candidate">
            Not a takeover candidate: <span className="font-mono text-xs">{props.candidacy.code}</span> —{' '}
            {props.candidacy.message}
          </p>
        )
      ) : null}
      {props.canStop && stoppable ? (
        <Button
          onClick={() => {
            setStopOperationId(newOperationId());
            setDialog('stop');
          }}
        >
          Request stop
        </Button>
      ) : null}
      {props.takeover ? null : abandonButton}
      <ConfirmDialog
        open={dialog === 'takeover'}
        title={`Request takeover of execution ${props.executionId}`}
        confirmLabel="Create proposal"
        pending={propose.pending}
        onClose={() => setDialog(null)}
        onConfirm={async () => {
          const result = await propose.execute({
            target: 'batch',
            executionId: props.executionId,
            reason: takeoverReason,
          });
          if (result.ok) setDialog(null);
        }}
      >
        <p>
          This records a recovery proposal bound to the execution&apos;s current evidence. Nothing changes on the
          execution until a different approver confirms it; if the execution changes first, the proposal is superseded.
        </p>
        <RequestReasonField
          id="takeover-reason"
          value={takeoverReason}
          onChange={setTakeoverReason}
          error={reasonError(propose.lastError)}
        />
      </ConfirmDialog>
      <ConfirmDialog
        open={dialog === 'stop'}
        title={`Request stop of execution ${props.executionId}`}
        confirmLabel="Request stop"
        tone="danger"
        pending={stop.pending}
        onClose={() => setDialog(null)}
        onConfirm={async () => {
          const result = await stop.execute({ executionId: props.executionId, operationId: stopOperationId });
          // A refusal (the execution moved on meanwhile) closes the dialog too: the toast says why over the
          // page's new state, instead of a dialog asking to stop what can no longer be stopped.
          setDialog(null);
          if (!result.ok) router.refresh();
        }}
      >
        <p>
          This sets a stop request on the execution (your name and the time). The runtime stops it at its next safe
          point; Keel itself does not interrupt anything. The execution&apos;s version stays as it is, so its
          worker&apos;s next write still succeeds and sees the request.
        </p>
        <p className="text-xs text-zinc-600 dark:text-zinc-400">
          Operation id{' '}
          <span className="font-mono" data-testid="stop-operation-id">
            {stopOperationId}
          </span>
        </p>
      </ConfirmDialog>
      <ConfirmDialog
        open={dialog === 'abandon'}
        title={`Propose abandoning execution ${props.executionId}`}
        confirmLabel="Create abandon proposal"
        tone="danger"
        pending={abandon.pending}
        onClose={() => setDialog(null)}
        onConfirm={async () => {
          const result = await abandon.execute({ executionId: props.executionId, note: abandonReason });
          if (result.ok) setDialog(null);
        }}
      >
        <p>
          Abandoning makes the execution permanently ABANDONED: its job instance can no longer be restarted from it.
          This records a proposal bound to the execution&apos;s current evidence; another approver must confirm it, and
          if the execution changes first the proposal is superseded.
        </p>
        <RequestReasonField
          id="abandon-reason"
          value={abandonReason}
          onChange={setAbandonReason}
          error={reasonError(abandon.lastError, 'note')}
        />
      </ConfirmDialog>
    </section>
  );
}
