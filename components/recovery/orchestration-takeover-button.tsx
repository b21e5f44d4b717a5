'use client';

import { isActorRef } from '@/lib/domain/actor-ref';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { proposeTakeover } from '@/app/actions/recovery';
import { queryKeys } from '@/lib/query-keys';
import { useServerAction } from '../actions/use-server-action';
import { Button } from '../ui/button';
import { ConfirmDialog } from '../ui/confirm-dialog';
import { reasonError, RequestReasonField } from './request-reason-field';

export function OrchestrationTakeoverButton({
  executionId,
  leaseOwner,
  fencingToken,
}: {
  executionId: string;
  leaseOwner: string;
  fencingToken: number;
}) {
  const router = useRouter();
  const [open, setOpen] = useState(false);
  const [successor, setSuccessor] = useState('');
  const [reason, setReason] = useState('');
  const propose = useServerAction(proposeTakeover, {
    success: (v) => (v.created ? `Proposal ${v.proposalId} created` : `Proposal ${v.proposalId} was already pending`),
    invalidate: [queryKeys.proposals.all, queryKeys.orchestrations.all],
    onSuccess: (v) => router.push(`/recovery/${v.proposalId}`),
    shownInline: (refusal) => reasonError(refusal) !== undefined,
  });
  return (
    <>
      <Button
        onClick={() => {
          setReason('');
          setOpen(true);
        }}
      >
        Request takeover
      </Button>
      <ConfirmDialog
        open={open}
        title={`Request takeover of ${executionId}`}
        confirmLabel="Create proposal"
        pending={propose.pending}
        canConfirm={isActorRef(successor)}
        onClose={() => setOpen(false)}
        onConfirm={async () => {
          const result = await propose.execute({
            target: 'orchestration',
            executionId,
            successorOwner: successor,
            reason,
          });
          if (result.ok) setOpen(false);
        }}
      >
        <p>
          The lapsed lease of {leaseOwner} (fencing token {fencingToken}) would pass to the owner you name,{' '}
          {`with token ${fencingToken + 1}`}, once a different approver confirms. Nothing changes until then.
        </p>
        <label className="block text-xs font-medium">
          Successor owner
          <input
            value={successor}
            onChange={(e) => setSuccessor(e.target.value.trim())}
            placeholder="orchestrator-4"
            className={
              'mt-1 block w-full rounded-md border border-zinc-300 bg-white px-2 py-1.5 text-sm dark:border-zinc-700 ' +
              'dark:bg-zinc-950'
            }
          />
        </label>
        <RequestReasonField
          id={`takeover-reason-${executionId}`}
          value={reason}
          onChange={setReason}
          error={reasonError(propose.lastError)}
        />
      </ConfirmDialog>
    </>
  );
}
