'use client';

import { Button } from '../ui/button';
import { PageCheckbox, type DeadLetterSelection } from './dead-letter-selection';

/**
 * The selection bar of the queue's Retry scheduled tab: tick the page and requeue the
 * ticked settlements through a frozen bulk job. It keeps the dead letters' selection
 * (ticks kept across pages of one filter, dropped when the filter changes); there is no
 * "every match" here, since a requeue preview freezes ticked receipts only.
 */
export function RequeueSelectionBar({
  selection,
  pageIds,
  onRequeue,
}: {
  selection: DeadLetterSelection;
  pageIds: string[];
  onRequeue: () => void;
}) {
  const pageSelected = pageIds.length > 0 && pageIds.every((id) => selection.ids.has(id));
  return (
    <div role="group" aria-label="Selection" className="flex flex-wrap items-center gap-3 text-sm">
      <PageCheckbox selection={selection} pageIds={pageIds} checked={pageSelected} />
      <span data-testid="selection-count" aria-live="polite">
        {selection.ids.size.toLocaleString('en-US')} selected
      </span>
      {selection.ids.size > 0 ? <Button onClick={selection.clear}>Clear selection</Button> : null}
      <Button variant="primary" disabled={selection.ids.size === 0} onClick={onRequeue}>
        Requeue selected…
      </Button>
    </div>
  );
}
