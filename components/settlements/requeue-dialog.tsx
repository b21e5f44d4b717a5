'use client';

import { useState } from 'react';
import { requeueSettlementAction } from '@/app/actions/settlements';
import { queryKeys } from '@/lib/query-keys';
import { useServerAction } from '../actions/use-server-action';
import { ConfirmDialog } from '../ui/confirm-dialog';
import { ZonedTime } from '../ui/time-zone';
import { receiptHref } from './links';
import { NoteField } from './note-field';
import type { RequeueTarget } from './requeue-target';

/** Makes one retry-scheduled settlement due now; mounted only while open. */
export function RequeueDialog({ target, onClose }: { target: RequeueTarget; onClose: () => void }) {
  const [note, setNote] = useState('');
  const requeue = useServerAction(requeueSettlementAction, {
    success: (v) => `Requeued ${v.receiptId}: due now`,
    // It leaves the Retry scheduled tab: its own page shows where it went.
    link: (v) => ({ href: receiptHref(v.receiptId), label: `Open ${v.receiptId}` }),
    invalidate: [queryKeys.settlements.all, queryKeys.audit.all],
    shownInline: (refusal) => Boolean(refusal.fieldErrors?.note),
  });
  return (
    <ConfirmDialog
      open
      title={`Requeue ${target.receiptId} now?`}
      confirmLabel="Requeue now"
      pending={requeue.pending}
      onClose={onClose}
      onConfirm={async () => {
        const result = await requeue.execute({
          receiptId: target.receiptId,
          expectedRowVersion: target.rowVersion,
          operationId: target.operationId,
          note,
        });
        if (result.ok) onClose();
      }}
    >
      <p>
        Its next visibility moves from <ZonedTime at={target.nextVisibleAtMs} /> to now, so the next worker to claim due
        rows picks it up. Its attempts ({target.attempts}) and reason stay as they are. This applies only if the row is
        still at row version {target.rowVersion} and no worker holds it; otherwise it is refused with CONFLICT.
      </p>
      <NoteField id="requeue-note" value={note} onChange={setNote} error={requeue.lastError?.fieldErrors?.note?.[0]} />
    </ConfirmDialog>
  );
}
