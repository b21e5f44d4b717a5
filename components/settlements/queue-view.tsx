'use client';

import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useQueryStates } from 'nuqs';
import { lazy, Suspense, useState } from 'react';
import { formatCappedCount } from '@/lib/domain/capped-count';
import { ApiError } from '@/lib/http/read-json';
import type { QueueRow, QueueState } from '@/lib/queries/settlements-types';
import { settlementQueueQuery } from '@/lib/reads/queries';
import { queueSearch } from '@/lib/url-state/settlements';
import { Button } from '../ui/button';
import { KeysetPager } from '../ui/keyset-pager';
import { ErrorState, hasFilters, LoadingRow, NoMatches } from '../ui/states';
import { useCalmRows } from '../ui/calm-rows';
import { Cell, DataTable } from '../ui/table';
import { TimeAgo } from '../ui/time-ago';
import { useTimeZone } from '../ui/time-zone';
import { useDeadLetterSelection } from './dead-letter-selection';
import { requeueTarget, type RequeueTarget } from './requeue-target';
import { RequeueSelectionBar } from './requeue-selection';
import { filterParams } from './filter-params';
import { ReceiptCell } from './receipt-cell';
import { SettlementFilterForm, useSettlementFilters } from './settlement-filters';
import { SettlementTabs } from './settlement-tabs';
import { useOpenOnStateWithRows } from './open-on-rows';

// The dialogs load when one first opens, not with the list (React.lazy: no next/dynamic runtime on the page either).
const RequeueDialog = lazy(() => import('./requeue-dialog').then((m) => ({ default: m.RequeueDialog })));
const BulkRequeueDialog = lazy(() => import('./bulk-requeue-dialog').then((m) => ({ default: m.BulkRequeueDialog })));
// What hides a receipt searched by its exact id: needed only when such a search finds nothing.
const HiddenReceipt = lazy(() => import('./hidden-receipt').then((m) => ({ default: m.HiddenReceipt })));

const STATE_LABEL: Record<QueueState, string> = { due: 'due', leased: 'leased', retry_scheduled: 'retry scheduled' };
const DASH = <span className="text-zinc-500 dark:text-zinc-400">—</span>;

/**
 * The settlement queue in due order, one state at a time, with the filters and the
 * keyset cursor in the URL. The server rendered the first view; this keeps it current.
 */
export function QueueView({ canAct }: { canAct: boolean }) {
  const tz = useTimeZone();
  const { values, cursor, apply, setCursor } = useSettlementFilters();
  const [{ state }, setView] = useQueryStates(
    { state: queueSearch.state, cursor: queueSearch.cursor },
    { history: 'push' },
  );
  const params = filterParams(values, { state, cursor });
  const query = useQuery({ ...settlementQueueQuery.options(params), placeholderData: keepPreviousData });
  const [requeue, setRequeue] = useState<RequeueTarget | null>(null);
  const [bulkRequeue, setBulkRequeue] = useState<string[] | null>(null);
  // Rows being read stay put; newer ones wait behind "Updates waiting".
  const [page, calm] = useCalmRows(
    query,
    params,
    (p) => p.rows,
    (row) => row.receiptId,
  );
  const failure = query.error instanceof ApiError ? query.error : null;
  const current = (state ?? 'due') as QueueState | 'all';
  useOpenOnStateWithRows(
    state,
    page?.stateCounts,
    (next) => void setView({ state: next, cursor: null }, { history: 'replace' }),
  );
  const now = new Date(page?.serverNowMs ?? 0);
  // Selection is for bulk requeue, so only the Retry scheduled tab offers it, and only on rows a requeue applies to.
  const selecting = canAct && current === 'retry_scheduled';
  const selection = useDeadLetterSelection(`${current}?${new URLSearchParams(filterParams(values)).toString()}`);
  const pageIds = page?.rows.filter(isRequeueable).map((r) => r.receiptId) ?? [];
  // A search by an exact receipt id says what hides that receipt, if it exists.
  const noMatches = values.q ? (
    <Suspense fallback={<NoMatches noun="settlements" onClear={() => apply({})} />}>
      <HiddenReceipt
        view={{ kind: 'queue', state: current }}
        values={values}
        noun="settlements"
        onClear={() => apply({})}
      />
    </Suspense>
  ) : (
    <NoMatches noun="settlements" onClear={() => apply({})} />
  );
  const head = [
    'Receipt',
    'State',
    'Attempts',
    tz.heading(current === 'retry_scheduled' ? 'Next visible' : 'Due since', now),
    tz.heading('Lease', now),
    'Reason',
    ...(canAct ? ['Actions'] : []),
  ];

  return (
    <section aria-label="Settlement queue" className="space-y-4">
      <SettlementTabs counts={page?.stateCounts} queueState={current} />
      <SettlementFilterForm
        label="Filter the queue"
        values={values}
        fieldErrors={failure?.fieldErrors}
        onApply={apply}
        ageMeaning="On the queue, age is how long a row has been due (a retry still waiting has none)."
      />
      {query.isError ? <ErrorState detail={`${failure?.code ?? 'ERROR'}: ${query.error.message}`} /> : null}
      <p className="text-sm text-zinc-700 dark:text-zinc-300" aria-live="polite" data-testid="queue-count">
        {page
          ? `${formatCappedCount(page.count)} ${current === 'all' ? 'queued' : STATE_LABEL[current]} ` +
            `settlement${page.count.value === 1 && !page.count.capped ? '' : 's'} match`
          : '\u00a0'}
        {query.isFetching && page ? <span className="ml-2 text-zinc-600 dark:text-zinc-400">Refreshing…</span> : null}
      </p>
      {selecting ? (
        <RequeueSelectionBar
          selection={selection}
          pageIds={pageIds}
          onRequeue={() => setBulkRequeue([...selection.ids])}
        />
      ) : null}
      <DataTable
        caption="Settlement queue"
        calm={calm}
        head={head}
        empty={page?.rows.length === 0 && (hasFilters(values) ? noMatches : true)}
      >
        {!page ? <LoadingRow columns={head.length} /> : null}
        {page?.rows.map((row) => (
          <QueueTableRow
            key={row.receiptId}
            row={row}
            now={now}
            canAct={canAct}
            onRequeue={() => setRequeue(requeueTarget(row))}
            selected={selecting && isRequeueable(row) ? selection.ids.has(row.receiptId) : null}
            onSelect={(on) => selection.toggle(row.receiptId, on)}
          />
        ))}
      </DataTable>
      <KeysetPager label="Queue pages" cursor={cursor} nextCursor={page?.nextCursor} onChange={setCursor} />
      <Suspense fallback={null}>
        {requeue ? <RequeueDialog target={requeue} onClose={() => setRequeue(null)} /> : null}
        {bulkRequeue ? (
          <BulkRequeueDialog
            receiptIds={bulkRequeue}
            onClose={() => setBulkRequeue(null)}
            onPreviewed={selection.clear}
          />
        ) : null}
      </Suspense>
    </section>
  );
}

// Only a retry waiting for its time can be requeued; a due row is already due, a leased one is a worker's.
const isRequeueable = (row: QueueRow) => row.state === 'retry_scheduled' && row.workKind === 'retry_scheduled';

function QueueTableRow({
  row,
  now,
  canAct,
  onRequeue,
  selected,
  onSelect,
}: {
  row: QueueRow;
  now: Date;
  canAct: boolean;
  onRequeue: () => void;
  /** Null when the row offers no checkbox. */
  selected: boolean | null;
  onSelect: (on: boolean) => void;
}) {
  const requeueable = isRequeueable(row);
  return (
    <tr data-receipt={row.receiptId}>
      <ReceiptCell receiptId={row.receiptId} selected={selected} onSelect={onSelect} />
      <Cell>
        {STATE_LABEL[row.state]}
        <span className="ml-1 text-xs text-zinc-600 dark:text-zinc-400" title={row.workKind}>
          ({row.workKind === 'retry_scheduled' ? 'retry' : 'pending'})
        </span>
      </Cell>
      <Cell>{row.attempts}</Cell>
      <Cell>
        <TimeAgo at={new Date(row.nextVisibleAtMs)} now={now} column />
      </Cell>
      <Cell>
        {row.leaseOwner !== null && row.leaseUntilMs !== null ? (
          <>
            {row.leaseOwner}
            <span className="block text-xs">
              {row.state === 'leased' ? 'expires' : 'lapsed'}{' '}
              <TimeAgo at={new Date(row.leaseUntilMs)} now={now} column />
            </span>
          </>
        ) : (
          DASH
        )}
      </Cell>
      <Cell mono>{row.reasonCode ?? DASH}</Cell>
      {canAct ? (
        <Cell>
          {requeueable ? (
            <Button onClick={onRequeue} aria-label={`Requeue ${row.receiptId} now`}>
              Requeue now
            </Button>
          ) : null}
        </Cell>
      ) : null}
    </tr>
  );
}
