'use client';

import { useState } from 'react';
import { discardDeadLetterAction, replayDeadLetterAction } from '@/app/actions/settlements';
import { queryKeys } from '@/lib/query-keys';
import { useServerAction, type Refusal } from '../actions/use-server-action';
import { ConfirmDialog } from '../ui/confirm-dialog';
import type { DeadLetterTarget } from './dead-letter-target';
import { receiptHref } from './links';
import { NoteField } from './note-field';

const INVALIDATE = [queryKeys.settlements.all, queryKeys.audit.all];
// A refused note is shown under the note field, not again in a toast.
const noteRefused = (refusal: Refusal) => Boolean(refusal.fieldErrors?.note);
// The replayed receipt leaves the list it was on (and a filter
// carried to the queue may hide it): its own page shows where it is.
const receiptLink = (v: { receiptId: string }) => ({ href: receiptHref(v.receiptId), label: `Open ${v.receiptId}` });

/** Replay or discard one dead letter, with a required note; mounted only while open. */
export function DeadLetterDialog({ target, onClose }: { target: DeadLetterTarget; onClose: () => void }) {
  const [note, setNote] = useState('');
  const replay = useServerAction(replayDeadLetterAction, {
    success: (v) => `Replayed ${v.receiptId}: queued again with 0 attempts`,
    link: receiptLink,
    invalidate: INVALIDATE,
    shownInline: noteRefused,
  });
  const discard = useServerAction(discardDeadLetterAction, {
    success: (v) => `Discarded the dead letter of ${v.receiptId}`,
    link: receiptLink,
    invalidate: INVALIDATE,
    shownInline: noteRefused,
  });
  const run = target.kind === 'replay' ? replay : discard;
  const attempts = `${target.attempts} attempt${target.attempts === 1 ? '' : 's'}`;
  return (
    <ConfirmDialog
      open
      title={target.kind === 'replay' ? `Replay ${target.receiptId}?` : `Discard ${target.receiptId}?`}
      confirmLabel={target.kind === 'replay' ? 'Replay dead letter' : 'Discard dead letter'}
      tone={target.kind === 'replay' ? 'primary' : 'danger'}
      pending={run.pending}
      canConfirm={note.trim() !== ''}
      onClose={onClose}
      onConfirm={async () => {
        const result = await run.execute({ receiptId: target.receiptId, note, operationId: target.operationId });
        if (result.ok) onClose();
      }}
    >
      {target.kind === 'replay' ? (
        <p>
          The dead letter of <span className="font-mono text-xs">{target.receiptId}</span> (reason{' '}
          <span className="font-mono text-xs">{target.reason}</span>, {attempts}) is deleted and the receipt is queued
          again: pending observation, 0 attempts, due now. The replay is recorded with your name, note and this
          dialog&apos;s operation id, so submitting it again replays once.
        </p>
      ) : (
        <p>
          The dead letter of <span className="font-mono text-xs">{target.receiptId}</span> (reason{' '}
          <span className="font-mono text-xs">{target.reason}</span>, {attempts}) is deleted for good: the receipt will
          not be settled. Its JSON is kept in the audit event with your note.
        </p>
      )}
      <NoteField
        id="dead-letter-note"
        value={note}
        onChange={setNote}
        required
        error={run.lastError?.fieldErrors?.note?.[0]}
      />
      <p className="text-xs text-zinc-600 dark:text-zinc-400">
        Operation id{' '}
        <span className="font-mono" data-testid="operation-id">
          {target.operationId}
        </span>
      </p>
    </ConfirmDialog>
  );
}
