'use client';

import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { lazy, Suspense, useState } from 'react';
import { formatCappedCount } from '@/lib/domain/capped-count';
import { deadLetterSummary, detailCellText, failureCodeWords } from '@/lib/domain/settlement-failure';
import { ApiError } from '@/lib/http/read-json';
import type { DeadLetterRow } from '@/lib/queries/settlements-types';
import { deadLetterGroupsQuery, deadLetterListQuery } from '@/lib/reads/queries';
import { Button } from '../ui/button';
import { KeysetPager } from '../ui/keyset-pager';
import { ErrorState, LoadingRow, NoMatches } from '../ui/states';
import { useCalmRows } from '../ui/calm-rows';
import { Cell, DataTable } from '../ui/table';
import { TimeAgo } from '../ui/time-ago';
import { useTimeZone } from '../ui/time-zone';
import { deadLetterTarget, type DeadLetterTarget } from './dead-letter-target';
import { DeadLetterGroupsPanel } from './dead-letter-groups';
import { DeadLetterSelectionBar, useDeadLetterSelection } from './dead-letter-selection';
import { filterParams } from './filter-params';
import { ReceiptCell } from './receipt-cell';
import { SettlementFilterForm, useSettlementFilters } from './settlement-filters';
import { SettlementTabs } from './settlement-tabs';

// The dialogs load when one first opens, not with the list (React.lazy: no next/dynamic runtime on the page either).
const DeadLetterDialog = lazy(() => import('./dead-letter-dialog').then((m) => ({ default: m.DeadLetterDialog })));
const BulkReplayDialog = lazy(() => import('./bulk-replay-dialog').then((m) => ({ default: m.BulkReplayDialog })));
// What hides a receipt searched by its exact id: needed only when such a search finds nothing.
const HiddenReceipt = lazy(() => import('./hidden-receipt').then((m) => ({ default: m.HiddenReceipt })));

/**
 * Dead letters, newest first, grouped by reason code, with the filters and cursor in
 * the URL. Support and admins replay or discard one, or bulk-replay the filter.
 */
export function DeadLettersView({ canAct }: { canAct: boolean }) {
  const tz = useTimeZone();
  const { values, cursor, apply, setCursor } = useSettlementFilters();
  const params = filterParams(values, { cursor });
  const query = useQuery({ ...deadLetterListQuery.options(params), placeholderData: keepPreviousData });
  // Groups ignore the reason (they are the reasons) and the page.
  const groupParams = filterParams({ ...values, reason: undefined });
  const groups = useQuery({ ...deadLetterGroupsQuery.options(groupParams), placeholderData: keepPreviousData });
  const [target, setTarget] = useState<DeadLetterTarget | null>(null);
  // What the bulk dialog was opened for: the ticked receipts, or the whole filter.
  const [bulk, setBulk] = useState<{ receiptIds?: string[]; action: 'REPLAY' | 'DISCARD' } | null>(null);
  // Rows being read stay put; newer ones wait behind "Updates waiting".
  const [page, calm] = useCalmRows(
    query,
    params,
    (p) => p.rows,
    (row) => row.receiptId,
  );
  const failure = query.error instanceof ApiError ? query.error : null;
  const now = new Date(page?.serverNowMs ?? groups.data?.serverNowMs ?? 0);
  const head = ['Receipt', 'Reason', 'Detail', 'Attempts', tz.heading('Recorded', now), ...(canAct ? ['Actions'] : [])];
  const filtered = Object.keys(values).length > 0;
  const selection = useDeadLetterSelection(new URLSearchParams(filterParams(values)).toString());
  const selected = () => (selection.all ? {} : { receiptIds: [...selection.ids] });
  const pageIds = page?.rows.map((r) => r.receiptId) ?? [];
  // A search by an exact receipt id says what hides that receipt, if it exists.
  const noMatches = values.q ? (
    <Suspense fallback={<NoMatches noun="dead letters" onClear={() => apply({})} />}>
      <HiddenReceipt view={{ kind: 'dead-letters' }} values={values} noun="dead letters" onClear={() => apply({})} />
    </Suspense>
  ) : (
    <NoMatches noun="dead letters" onClear={() => apply({})} />
  );

  return (
    <section aria-label="Dead letters" className="space-y-4">
      <SettlementTabs counts={page ? { dead_lettered: page.count } : undefined} />
      <DeadLetterGroupsPanel
        groups={groups.data}
        selected={values.reason}
        onSelect={(reason) => apply({ ...values, reason: reason ?? undefined })}
      />
      <SettlementFilterForm
        label="Filter dead letters"
        values={values}
        fieldErrors={failure?.fieldErrors}
        onApply={apply}
        ageMeaning="On dead letters, age is the time since the dead letter was recorded."
      />
      {query.isError ? <ErrorState detail={`${failure?.code ?? 'ERROR'}: ${query.error.message}`} /> : null}
      <div className="flex flex-wrap items-center justify-between gap-3">
        <p className="text-sm text-zinc-700 dark:text-zinc-300" aria-live="polite" data-testid="dead-letter-count">
          {page
            ? `${formatCappedCount(page.count)} dead ` +
              `letter${page.count.value === 1 && !page.count.capped ? '' : 's'}${filtered ? ' match' : ''}`
            : '\u00a0'}
          {query.isFetching && page ? <span className="ml-2 text-zinc-600 dark:text-zinc-400">Refreshing…</span> : null}
        </p>
        {canAct ? (
          <Button disabled={!page || page.count.value === 0} onClick={() => setBulk({ action: 'REPLAY' })}>
            Bulk replay {filtered ? 'these' : 'all'}…
          </Button>
        ) : null}
      </div>
      {canAct ? (
        <DeadLetterSelectionBar
          selection={selection}
          pageIds={pageIds}
          matching={page?.count}
          filtered={filtered}
          onReplay={() => setBulk({ ...selected(), action: 'REPLAY' })}
          onDiscard={() => setBulk({ ...selected(), action: 'DISCARD' })}
        />
      ) : null}
      <DataTable
        caption="Dead letters"
        calm={calm}
        head={head}
        empty={page?.rows.length === 0 && (filtered ? noMatches : true)}
      >
        {!page ? <LoadingRow columns={head.length} /> : null}
        {page?.rows.map((row) => (
          <DeadLetterTableRow
            key={row.receiptId}
            row={row}
            now={now}
            canAct={canAct}
            selected={selection.all || selection.ids.has(row.receiptId)}
            selectionLocked={selection.all}
            onSelect={(on) => selection.toggle(row.receiptId, on)}
            onAct={(kind) => setTarget(deadLetterTarget(kind, row))}
          />
        ))}
      </DataTable>
      <KeysetPager label="Dead letter pages" cursor={cursor} nextCursor={page?.nextCursor} onChange={setCursor} />
      <Suspense fallback={null}>
        {target ? <DeadLetterDialog target={target} onClose={() => setTarget(null)} /> : null}
        {bulk ? (
          <BulkReplayDialog
            filters={values}
            receiptIds={bulk.receiptIds}
            action={bulk.action}
            matching={page?.count}
            onClose={() => setBulk(null)}
            onPreviewed={selection.clear}
          />
        ) : null}
      </Suspense>
    </section>
  );
}

function DeadLetterTableRow({
  row,
  now,
  canAct,
  selected,
  selectionLocked,
  onSelect,
  onAct,
}: {
  row: DeadLetterRow;
  now: Date;
  canAct: boolean;
  selected: boolean;
  selectionLocked: boolean;
  onSelect: (on: boolean) => void;
  onAct: (kind: 'replay' | 'discard') => void;
}) {
  return (
    <tr data-receipt={row.receiptId}>
      <ReceiptCell
        receiptId={row.receiptId}
        selected={canAct ? selected : null}
        locked={selectionLocked}
        onSelect={onSelect}
      />
      {/* The code and what it names; beside it the detail digest's first digits (in full on the receipt's page). */}
      <td className="px-3 py-2">
        <span className="font-mono text-xs">{row.reason}</span>
        <span className="block max-w-52 text-xs text-zinc-600 dark:text-zinc-400">{failureCodeWords(row.reason)}</span>
      </td>
      <td className="whitespace-nowrap px-3 py-2 font-mono text-xs" title={deadLetterSummary(row)}>
        {detailCellText(row.detailSha256Hex)}
      </td>
      <Cell>{row.attempts}</Cell>
      <Cell>
        <TimeAgo at={new Date(row.recordedAtMs)} now={now} column />
      </Cell>
      {canAct ? (
        <Cell>
          <span className="flex gap-2">
            <Button onClick={() => onAct('replay')} aria-label={`Replay ${row.receiptId}`}>
              Replay…
            </Button>
            <Button onClick={() => onAct('discard')} aria-label={`Discard ${row.receiptId}`}>
              Discard…
            </Button>
          </span>
        </Cell>
      ) : null}
    </tr>
  );
}
