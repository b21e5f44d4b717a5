'use client';

import { useState } from 'react';
import { formatCappedCount, type CappedCount } from '@/lib/domain/capped-count';
import { Button } from '../ui/button';

/**
 * Rows ticked on the dead letters page, or every row the filter matches. Ticks are kept
 * across pages of the same filter and dropped when the filter changes (they were picked
 * from what it showed). `all`: the filter itself is the selection, however many match.
 */
export interface DeadLetterSelection {
  ids: ReadonlySet<string>;
  all: boolean;
  toggle: (receiptId: string, on: boolean) => void;
  setPage: (receiptIds: string[], on: boolean) => void;
  selectAllMatching: () => void;
  clear: () => void;
}

export function useDeadLetterSelection(filterKey: string): DeadLetterSelection {
  const [state, setState] = useState<{ key: string; ids: Set<string>; all: boolean }>({
    key: filterKey,
    ids: new Set(),
    all: false,
  });
  const current = state.key === filterKey ? state : { key: filterKey, ids: new Set<string>(), all: false };
  const update = (ids: Set<string>, all = false) => setState({ key: filterKey, ids, all });
  return {
    ids: current.ids,
    all: current.all,
    toggle: (receiptId, on) => {
      const ids = new Set(current.ids);
      if (on) ids.add(receiptId);
      else ids.delete(receiptId);
      update(ids);
    },
    setPage: (receiptIds, on) => {
      const ids = new Set(current.ids);
      for (const id of receiptIds)
        if (on) ids.add(id);
        else ids.delete(id);
      update(ids);
    },
    selectAllMatching: () => update(new Set(), true),
    clear: () => update(new Set()),
  };
}

/** Ticks or unticks every row on the page; `locked` while the whole filter is the selection. */
export function PageCheckbox({
  selection,
  pageIds,
  checked,
  locked = false,
}: {
  selection: DeadLetterSelection;
  pageIds: string[];
  checked: boolean;
  locked?: boolean;
}) {
  return (
    <label className="flex items-center gap-2">
      <input
        type="checkbox"
        checked={checked}
        disabled={pageIds.length === 0 || locked}
        onChange={(e) => selection.setPage(pageIds, e.target.checked)}
      />
      Select all {pageIds.length} on this page
    </label>
  );
}

/** The selection bar above the table: tick the page, widen to every match, and act on the selection. */
export function DeadLetterSelectionBar({
  selection,
  pageIds,
  matching,
  filtered,
  onReplay,
  onDiscard,
}: {
  selection: DeadLetterSelection;
  pageIds: string[];
  matching: CappedCount | undefined;
  filtered: boolean;
  onReplay: () => void;
  onDiscard: () => void;
}) {
  const pageSelected = pageIds.length > 0 && pageIds.every((id) => selection.all || selection.ids.has(id));
  const count = selection.all ? matching : { value: selection.ids.size, capped: false };
  const described = selection.all
    ? `All ${matching ? formatCappedCount(matching) : ''} ` +
      `${filtered ? 'matching the filter' : 'dead letters'} are selected.`
    : `${selection.ids.size.toLocaleString('en-US')} selected`;
  return (
    <div role="group" aria-label="Selection" className="flex flex-wrap items-center gap-3 text-sm">
      <PageCheckbox selection={selection} pageIds={pageIds} checked={pageSelected} locked={selection.all} />
      <span data-testid="selection-count" aria-live="polite">
        {described}
      </span>
      {!selection.all && pageSelected && matching && matching.value > pageIds.length ? (
        <Button onClick={selection.selectAllMatching}>
          Select all {formatCappedCount(matching)} {filtered ? 'matching the filter' : 'dead letters'}
        </Button>
      ) : null}
      {selection.all || selection.ids.size > 0 ? <Button onClick={selection.clear}>Clear selection</Button> : null}
      <Button variant="primary" disabled={!count || count.value === 0} onClick={onReplay}>
        Replay selected…
      </Button>
      <Button variant="danger" disabled={!count || count.value === 0} onClick={onDiscard}>
        Discard selected…
      </Button>
    </div>
  );
}
