'use client';

import { previewBulkReplayAction } from '@/app/actions/settlements';
import { formatCappedCount, type CappedCount } from '@/lib/domain/capped-count';
import { deadLetterFilterOfWords } from '@/lib/domain/dead-letter-filter-words';
import { ConfirmDialog } from '../ui/confirm-dialog';
import { Cell, DataTable } from '../ui/table';
import { useTimeZone, ZonedTime } from '../ui/time-zone';
import type { FilterValues } from './filter-params';
import { describeDeadLetterFilter } from './filter-summary';
import { NoteField } from './note-field';
import { useBulkPreview } from './use-bulk-preview';

/**
 * Bulk replay of the current dead-letter filter, in two steps: a preview freezes the
 * matching dead letters (the exact count and a sample), then start replays exactly
 * those. Mounted only while open.
 */
export function BulkReplayDialog({
  filters,
  receiptIds,
  action = 'REPLAY',
  matching,
  onClose,
  onPreviewed,
}: {
  filters: FilterValues;
  /** The rows ticked on the page; without them the whole filter is previewed. */
  receiptIds?: string[];
  /** REPLAY (the default) or DISCARD, through the same frozen preview. */
  action?: 'REPLAY' | 'DISCARD';
  matching: CappedCount | undefined;
  onClose: () => void;
  onPreviewed?: () => void;
}) {
  const tz = useTimeZone();
  const discard = action === 'DISCARD';
  const verb = discard ? 'discard' : 'replay';
  const filter = deadLetterFilterOfWords(filters);
  const filterText = receiptIds
    ? describeDeadLetterFilter({ receiptIds })
    : filter
      ? describeDeadLetterFilter(filter)
      : 'an invalid filter';
  const { note, setNote, preview, previewAction, requestPreview, start } = useBulkPreview(previewBulkReplayAction, {
    previewed: (v) => `Bulk ${verb} ${v.jobId} previewed: ${v.itemCount.toLocaleString('en-US')} dead letters frozen`,
    started: (v) => `Bulk ${verb} ${v.jobId} started: ${v.itemCount.toLocaleString('en-US')} dead letters`,
    onPreviewed,
  });

  if (!preview) {
    return (
      <ConfirmDialog
        open
        title={`Bulk ${verb}: preview`}
        confirmLabel="Preview"
        pending={previewAction.pending}
        canConfirm={note.trim() !== '' && filter !== null}
        onClose={onClose}
        onConfirm={() => requestPreview({ filters, receiptIds, action, note })}
      >
        <p>
          The preview freezes {filterText} as they are now
          {matching && !receiptIds ? ` (${formatCappedCount(matching)} match at the moment)` : ''} and shows the exact
          count and a sample. Nothing is {discard ? 'discarded' : 'replayed'} until you start it; dead letters recorded
          after the preview are never part of it.
        </p>
        <NoteField
          id="bulk-note"
          value={note}
          onChange={setNote}
          required
          error={previewAction.lastError?.fieldErrors?.note?.[0]}
        />
      </ConfirmDialog>
    );
  }
  return (
    <ConfirmDialog
      open
      title={`Start bulk ${verb} ${preview.jobId}?`}
      confirmLabel={`${discard ? 'Discard' : 'Replay'} ${preview.itemCount.toLocaleString('en-US')} dead letters`}
      tone={discard ? 'danger' : 'primary'}
      wide
      pending={start.pending}
      canConfirm={preview.itemCount > 0}
      onClose={onClose}
      onConfirm={() => void start.execute({ jobId: preview.jobId })}
    >
      <p data-testid="bulk-preview-count">
        Exactly {preview.itemCount.toLocaleString('en-US')} dead letters were frozen at{' '}
        <ZonedTime at={preview.asOfMs} />: {filterText}.
      </p>
      <p>
        {discard
          ? 'Each is deleted for good (its JSON is kept in its audit event), ' +
            'and each discard is audited under your name with the note.'
          : 'Each is deleted from the dead letters and queued again (pending observation, 0 attempts, due now), ' +
            'and each replay is audited under your name with the note.'}{' '}
        A dead letter that is gone or was recorded again since the preview is skipped and reported.
        {preview.itemCount === 0
          ? ' Nothing matched, so there is nothing to start.'
          : ' Closing this dialog leaves the job unstarted, listed under Bulk replays.'}
      </p>
      {preview.sample.length > 0 ? (
        <div className="max-h-56 overflow-y-auto">
          <DataTable
            caption={`Sample of bulk replay ${preview.jobId}`}
            head={['Receipt', 'Reason', 'Attempts', tz.heading('Recorded', preview.asOfMs)]}
          >
            {preview.sample.map((item) => (
              <tr key={item.receiptId}>
                <Cell mono>{item.receiptId}</Cell>
                <Cell mono>{item.reason}</Cell>
                <Cell>{item.attempts}</Cell>
                <Cell>{tz.inColumn(item.recordedAtMs, preview.asOfMs)}</Cell>
              </tr>
            ))}
          </DataTable>
          {preview.itemCount > preview.sample.length ? (
            <p className="mt-1 text-xs text-zinc-600 dark:text-zinc-400">
              The first {preview.sample.length} by receipt id; every item is listed on the job&apos;s page.
            </p>
          ) : null}
        </div>
      ) : null}
    </ConfirmDialog>
  );
}
