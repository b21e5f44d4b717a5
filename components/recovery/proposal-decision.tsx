'use client';

import { useState } from 'react';
import { FAILURE_CATEGORIES, type FailureCategory } from '@/lib/domain/batch-status';
import { cancelRecoveryProposal, confirmProposal, rejectRecoveryProposal } from '@/app/actions/recovery';
import { queryKeys } from '@/lib/query-keys';
import type { ProposalDetail } from '@/lib/queries/recovery-types';
import { useServerAction } from '../actions/use-server-action';
import { Button } from '../ui/button';
import { ConfirmDialog } from '../ui/confirm-dialog';

// Every category the runtime records (and the action accepts), the usual one for a takeover first.
const CATEGORIES: readonly FailureCategory[] = [
  'STALE_RECOVERED',
  ...FAILURE_CATEGORIES.filter((c) => c !== 'STALE_RECOVERED'),
];
const field =
  'mt-1 block w-full rounded-md border border-zinc-300 bg-white px-2 py-1.5 text-sm dark:border-zinc-700 ' +
  'dark:bg-zinc-950';
const invalidate = [
  queryKeys.proposals.all,
  queryKeys.executions.all,
  queryKeys.orchestrations.all,
  queryKeys.audit.all,
];

/**
 * The decision buttons of a pending proposal. `ownProposal`: the viewer proposed it, so
 * four eyes keep them from deciding it; the buttons say so before anyone submits.
 */
export function ProposalDecision({
  proposal,
  canDecide,
  canCancel,
  ownProposal,
}: {
  proposal: ProposalDetail;
  canDecide: boolean;
  canCancel: boolean;
  ownProposal: boolean;
}) {
  const [dialog, setDialog] = useState<'confirm' | 'reject' | 'cancel' | null>(null);
  const [resulting, setResulting] = useState<'FAILED' | 'ABANDONED'>('FAILED');
  const [category, setCategory] = useState<FailureCategory>('STALE_RECOVERED');
  const unknownCommit = proposal.markers?.unknownCommit ?? false;
  const needsAck = unknownCommit || (proposal.markers?.ambiguousExternalEffect ?? false);
  const [reasonCode, setReasonCode] = useState(
    unknownCommit && proposal.kind !== 'ABANDON' ? 'UNKNOWN_EFFECT' : 'OPERATOR_CONFIRMED',
  );
  const [acknowledged, setAcknowledged] = useState(false);
  const [reason, setReason] = useState('');
  // The Reject dialog keeps its own text: what was typed as a confirm note is no rejection reason.
  const [rejectReason, setRejectReason] = useState('');
  // Set once a decision succeeded, so the buttons go at once instead of after the refresh.
  const [decided, setDecided] = useState<string | null>(null);
  const confirm = useServerAction(confirmProposal, {
    success: (v) =>
      v.kind === 'orchestration'
        ? `Lease handed to ${v.leaseOwner} (token ${v.fencingToken})`
        : v.kind === 'abandon'
          ? `Abandon applied: execution is now ${v.resultingStatus}`
          : `Takeover applied: execution is now ${v.resultingStatus}`,
    invalidate,
    // Invalid input keeps the dialog open with the refusal in it; other refusals close it and toast.
    shownInline: (refusal) => refusal.code === 'INVALID_INPUT',
  });
  const reject = useServerAction(rejectRecoveryProposal, { success: () => 'Proposal rejected', invalidate });
  const cancel = useServerAction(cancelRecoveryProposal, { success: () => 'Proposal cancelled', invalidate });
  if (proposal.status !== 'PENDING') return null;
  if (decided) {
    return (
      <p role="status" className="mb-6 text-sm text-zinc-700 dark:text-zinc-300">
        {decided}
      </p>
    );
  }
  const batch = proposal.targetKind === 'batch';
  const abandon = proposal.kind === 'ABANDON';
  const verb = abandon ? 'abandon' : 'takeover';
  const close = () => setDialog(null);
  // An abandon and a batch takeover both record a reason code with the runtime.
  const reasonCodeField = (
    <label className="block text-xs font-medium">
      Reason code
      <input
        value={reasonCode}
        onChange={(e) => setReasonCode(e.target.value.toUpperCase())}
        className={`${field} font-mono`}
      />
    </label>
  );

  return (
    <section aria-label="Decision" className="mb-6 flex flex-wrap gap-3">
      {canDecide && ownProposal ? (
        <>
          <Button variant="primary" disabled aria-describedby="four-eyes-rule">
            Confirm {verb}
          </Button>
          <Button disabled aria-describedby="four-eyes-rule">
            Reject
          </Button>
          <p id="four-eyes-rule" className="basis-full text-sm text-zinc-700 dark:text-zinc-300">
            You proposed this, so another approver or admin must confirm or reject it (four eyes, FOUR_EYES_REQUIRED).
          </p>
        </>
      ) : canDecide ? (
        <>
          <Button variant="primary" onClick={() => setDialog('confirm')}>
            Confirm {verb}
          </Button>
          <Button onClick={() => setDialog('reject')}>Reject</Button>
        </>
      ) : null}
      {canCancel ? <Button onClick={() => setDialog('cancel')}>Cancel proposal</Button> : null}

      <ConfirmDialog
        open={dialog === 'confirm'}
        title={`Confirm ${verb} of ${batch ? 'execution' : 'orchestration'} ${proposal.targetId}`}
        confirmLabel={`Confirm ${verb}`}
        tone="danger"
        pending={confirm.pending}
        canConfirm={abandon || !needsAck || acknowledged}
        onClose={close}
        onConfirm={async () => {
          const result = await confirm.execute({
            proposalId: proposal.id,
            evidenceDigest: proposal.evidenceDigest,
            ...(abandon
              ? { expectedVersion: proposal.expectedVersion ?? undefined, reasonCode }
              : batch
                ? {
                    expectedVersion: proposal.expectedVersion ?? undefined,
                    resultingStatus: resulting,
                    failureCategory: resulting === 'FAILED' ? category : undefined,
                    reasonCode,
                  }
                : { expectedFencingToken: proposal.expectedFencingToken ?? undefined }),
            acknowledged: needsAck && !abandon ? acknowledged : undefined,
            reason: reason || undefined,
          });
          if (result.ok || result.code !== 'INVALID_INPUT') close();
          if (result.ok) {
            const v = result.value;
            setDecided(
              v.kind === 'orchestration'
                ? `Approved. The lease now belongs to ${v.leaseOwner} with fencing token ${v.fencingToken}; ` +
                    `the old owner's writes with an older token are refused.`
                : v.kind === 'abandon'
                  ? `Approved. The execution is ${v.resultingStatus}.`
                  : `Approved. The execution is ${v.resultingStatus} at version ${v.version}. ` +
                    `Its old worker is fenced out: its next write carries the old version and is refused, ` +
                    `so its last step may still read STARTED and its owner "another process" until that worker ` +
                    `notices and stops.`,
            );
          }
        }}
      >
        {abandon ? (
          <>
            <p>
              If the execution is still at version {proposal.expectedVersion} with the same evidence, it becomes{' '}
              <strong>ABANDONED</strong> for good; its version goes up by one and an ABANDON operator request is written
              for the runtime. The owner token is left as it is.
            </p>
            {reasonCodeField}
          </>
        ) : batch ? (
          <>
            <p>
              If the execution is still at version {proposal.expectedVersion} with the same evidence, it becomes{' '}
              <strong>{resulting}</strong>
              {resulting === 'FAILED' ? (
                <>
                  {' '}
                  with failure category <strong>{category}</strong> and failure id {proposal.id}
                </>
              ) : null}
              ; its version goes up by one, and a recovery decision and a RECOVER operator request are written for the
              runtime. The owner token is left as it is.
            </p>
            <fieldset>
              <legend className="text-xs font-medium">Resulting status</legend>
              <div className="mt-1 flex gap-4">
                {(['FAILED', 'ABANDONED'] as const).map((s) => (
                  <label key={s} className="flex items-center gap-1.5">
                    <input
                      type="radio"
                      name="resulting"
                      value={s}
                      checked={resulting === s}
                      onChange={() => setResulting(s)}
                    />{' '}
                    {s}
                  </label>
                ))}
              </div>
            </fieldset>
            {resulting === 'FAILED' ? (
              <label className="block text-xs font-medium">
                Failure category
                <select
                  value={category}
                  onChange={(e) => setCategory(e.target.value as FailureCategory)}
                  className={field}
                >
                  {CATEGORIES.map((c) => (
                    <option key={c}>{c}</option>
                  ))}
                </select>
              </label>
            ) : null}
            {reasonCodeField}
          </>
        ) : (
          <p>
            If the lapsed lease is unchanged (token {proposal.expectedFencingToken}), it passes to{' '}
            <strong>{proposal.successorOwner}</strong> with token {(proposal.expectedFencingToken ?? 0) + 1}, and the
            checkpoint is re-authenticated.
          </p>
        )}
        <label className="block text-xs font-medium">
          Note (optional)
          <input value={reason} onChange={(e) => setReason(e.target.value)} className={field} maxLength={500} />
        </label>
        {needsAck && !abandon ? (
          <label
            className={
              'flex items-start gap-2 rounded-md border border-amber-400 bg-amber-50 p-2 text-amber-950 ' +
              'dark:bg-amber-950 dark:text-amber-50'
            }
          >
            <input
              type="checkbox"
              checked={acknowledged}
              onChange={(e) => setAcknowledged(e.target.checked)}
              className="mt-0.5"
            />
            <span>
              I understand that{' '}
              {unknownCommit
                ? 'the last commit may or may not have happened'
                : 'external effects may already have happened'}{' '}
              and that taking over cannot undo them.
            </span>
          </label>
        ) : null}
        {confirm.lastError ? (
          <p role="alert" className="text-red-800 dark:text-red-300">
            {confirm.lastError.code}: {confirm.lastError.message}
          </p>
        ) : null}
      </ConfirmDialog>

      <ConfirmDialog
        open={dialog === 'reject'}
        title={`Reject proposal ${proposal.id}`}
        confirmLabel="Reject"
        pending={reject.pending}
        canConfirm={rejectReason.trim().length > 0}
        onClose={close}
        onConfirm={async () => {
          const result = await reject.execute({ proposalId: proposal.id, reason: rejectReason });
          if (result.ok) {
            close();
            setDecided('Rejected. The proposal is closed; nothing changed on the target.');
          }
        }}
      >
        <p>The proposal closes as REJECTED; nothing changes on the target.</p>
        <label className="block text-xs font-medium">
          Reason (required)
          <input
            value={rejectReason}
            onChange={(e) => setRejectReason(e.target.value)}
            className={field}
            maxLength={500}
            required
          />
        </label>
      </ConfirmDialog>

      <ConfirmDialog
        open={dialog === 'cancel'}
        title={`Cancel proposal ${proposal.id}`}
        confirmLabel="Cancel proposal"
        pending={cancel.pending}
        onClose={close}
        onConfirm={async () => {
          const result = await cancel.execute({ proposalId: proposal.id });
          if (result.ok) {
            close();
            setDecided('Cancelled. The proposal is closed; nothing changed on the target.');
          }
        }}
      >
        <p>The proposal closes as CANCELLED; nothing changes on the target.</p>
      </ConfirmDialog>
    </section>
  );
}
