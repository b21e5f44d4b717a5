'use client';

import { useState } from 'react';
import { cancelBulkReplayAction, startBulkReplayAction } from '@/app/actions/settlements';
import type { BulkReplayDetail } from '@/lib/queries/settlements-types';
import { queryKeys } from '@/lib/query-keys';
import { useServerAction } from '../actions/use-server-action';
import { Button } from '../ui/button';
import { ConfirmDialog } from '../ui/confirm-dialog';
import { NoteField } from './note-field';

const INVALIDATE = [queryKeys.settlements.all, queryKeys.audit.all];
const n = (value: number) => value.toLocaleString('en-US');

/** Start a previewed job, or cancel one that has not finished; for roles that may replay. */
export function BulkReplayActions({ detail }: { detail: BulkReplayDetail }) {
  const { job, counts } = detail;
  const [dialog, setDialog] = useState<'start' | 'cancel' | null>(null);
  const [note, setNote] = useState('');
  const start = useServerAction(startBulkReplayAction, {
    success: (v) => `Bulk replay ${v.jobId} started`,
    invalidate: INVALIDATE,
  });
  const cancel = useServerAction(cancelBulkReplayAction, {
    success: (v) => `Bulk replay ${v.jobId} cancelled: ${n(v.cancelled)} items not replayed`,
    invalidate: INVALIDATE,
  });
  const open = job.status === 'PREVIEWED' || job.status === 'RUNNING';
  if (!open) return null;
  return (
    <div className="flex gap-2">
      {job.status === 'PREVIEWED' ? (
        <Button variant="primary" onClick={() => setDialog('start')} disabled={job.itemCount === 0}>
          Start replay…
        </Button>
      ) : null}
      <Button variant="danger" onClick={() => setDialog('cancel')}>
        Cancel bulk replay…
      </Button>
      {dialog === 'start' ? (
        <ConfirmDialog
          open
          title={`Start bulk replay ${job.id}?`}
          confirmLabel={`Replay ${n(job.itemCount)} dead letters`}
          pending={start.pending}
          onClose={() => setDialog(null)}
          onConfirm={async () => {
            const result = await start.execute({ jobId: job.id });
            if (result.ok) setDialog(null);
          }}
        >
          <p>
            The {n(job.itemCount)} dead letters frozen by the preview are replayed in batches: each is deleted and
            queued again (pending observation, 0 attempts, due now) and audited under your name with the job&apos;s
            note. Dead letters recorded since the preview are not included.
          </p>
        </ConfirmDialog>
      ) : null}
      {dialog === 'cancel' ? (
        <ConfirmDialog
          open
          title={`Cancel bulk replay ${job.id}?`}
          confirmLabel="Cancel bulk replay"
          tone="danger"
          pending={cancel.pending}
          onClose={() => setDialog(null)}
          onConfirm={async () => {
            const result = await cancel.execute({ jobId: job.id, note });
            if (result.ok) setDialog(null);
          }}
        >
          <p>
            The job stops between batches. The {n(counts.pending)} items not yet processed end as cancelled and stay
            dead-lettered; the {n(job.processedCount)} already processed keep their results (replays are not undone).
          </p>
          <NoteField id="cancel-note" value={note} onChange={setNote} />
        </ConfirmDialog>
      ) : null}
    </div>
  );
}
