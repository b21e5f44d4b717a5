'use client';

import { previewBulkRequeueAction } from '@/app/actions/settlements';
import { ConfirmDialog } from '../ui/confirm-dialog';
import { Cell, DataTable } from '../ui/table';
import { useTimeZone, ZonedTime } from '../ui/time-zone';
import { NoteField } from './note-field';
import { useBulkPreview } from './use-bulk-preview';

const plural = (n: number) => `${n.toLocaleString('en-US')} settlement${n === 1 ? '' : 's'}`;

/**
 * Bulk requeue of the ticked retry-scheduled settlements, in the bulk replay's two steps:
 * the preview freezes those still retry-scheduled (each at its row version), then start
 * hands exactly those to the bulk worker. Mounted only while open.
 */
export function BulkRequeueDialog({
  receiptIds,
  onClose,
  onPreviewed,
}: {
  receiptIds: string[];
  onClose: () => void;
  onPreviewed?: () => void;
}) {
  const tz = useTimeZone();
  const { note, setNote, preview, previewAction, requestPreview, start } = useBulkPreview(previewBulkRequeueAction, {
    previewed: (v) => `Bulk requeue ${v.jobId} previewed: ${plural(v.itemCount)} frozen`,
    started: (v) => `Bulk requeue ${v.jobId} started: ${plural(v.itemCount)}`,
    onPreviewed,
  });

  if (!preview) {
    return (
      <ConfirmDialog
        open
        title="Bulk requeue: preview"
        confirmLabel="Preview"
        pending={previewAction.pending}
        canConfirm={note.trim() !== ''}
        onClose={onClose}
        onConfirm={() => requestPreview({ receiptIds, note })}
      >
        <p>
          The preview freezes those of the {plural(receiptIds.length)} selected that are still retry-scheduled, each at
          its current row version, and shows the exact count and a sample. Nothing is requeued until you start it.
        </p>
        <NoteField
          id="bulk-requeue-note"
          value={note}
          onChange={setNote}
          required
          error={previewAction.lastError?.fieldErrors?.note?.[0]}
        />
      </ConfirmDialog>
    );
  }
  const left = preview.selectedCount - preview.itemCount;
  return (
    <ConfirmDialog
      open
      title={`Start bulk requeue ${preview.jobId}?`}
      confirmLabel={`Requeue ${plural(preview.itemCount)}`}
      wide
      pending={start.pending}
      canConfirm={preview.itemCount > 0}
      onClose={onClose}
      onConfirm={() => void start.execute({ jobId: preview.jobId })}
    >
      <p data-testid="bulk-preview-count">
        Exactly {plural(preview.itemCount)} were frozen at <ZonedTime at={preview.asOfMs} />
        {left > 0
          ? `; ${plural(left)} of the selection had already left the retries, ` +
            `so ${left === 1 ? 'it is' : 'they are'} not part of it`
          : ''}
        .
      </p>
      <p>
        Each is made due now (its attempts and reason stay as they are), and each requeue is audited under the name of
        whoever starts it, with the note. One that a worker claimed, retried or finished since the preview is left alone
        and reported.
        {preview.itemCount === 0
          ? ' Nothing is left to start.'
          : ' Closing this dialog leaves the job unstarted, listed under Bulk replays.'}
      </p>
      {preview.sample.length > 0 ? (
        <div className="max-h-56 overflow-y-auto">
          <DataTable
            caption={`Sample of bulk requeue ${preview.jobId}`}
            head={['Receipt', 'Attempts', 'Reason', tz.heading('Next visible', preview.asOfMs)]}
          >
            {preview.sample.map((item) => (
              <tr key={item.receiptId}>
                <Cell mono>{item.receiptId}</Cell>
                <Cell>{item.attempts}</Cell>
                <Cell mono>{item.reasonCode ?? '—'}</Cell>
                <Cell>{tz.inColumn(item.nextVisibleAtMs, preview.asOfMs)}</Cell>
              </tr>
            ))}
          </DataTable>
        </div>
      ) : null}
    </ConfirmDialog>
  );
}
