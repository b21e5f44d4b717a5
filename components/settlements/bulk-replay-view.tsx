'use client';

import { keepPreviousData, useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useQueryStates } from 'nuqs';
import { bulkReplayItemsSearch } from '@/lib/url-state/settlements';
import { ApiError } from '@/lib/http/read-json';
import { BULK_ITEM_RESULTS } from '@/lib/queries/settlements-filter-types';
import { bulkReplayDetailQuery } from '@/lib/reads/queries';
import { Button } from '../ui/button';
import { Fact } from '../ui/fact';
import { ErrorState } from '../ui/states';
import { StatusBadge } from '../ui/status-badge';
import { Cell, DataTable } from '../ui/table';
import { TimeAgo } from '../ui/time-ago';
import { useTimeZone, ZonedTime } from '../ui/time-zone';
import { BulkReplayActions } from './bulk-replay-actions';
import { CHIP } from './chip';
import { filterParams } from './filter-params';
import { describeDeadLetterFilter } from './filter-summary';
import { LINK, receiptHref } from './links';

const DASH = <span className="text-zinc-500 dark:text-zinc-400">—</span>;

const ACTION_TEXT = {
  REPLAY: 'Replay each',
  DISCARD: 'Discard each (deleted for good; its JSON kept in the audit log)',
  REQUEUE: 'Requeue each retry-scheduled settlement (due now; attempts unchanged)',
} as const;

/**
 * One bulk replay: its frozen filter, progress (polled while it runs), counts by
 * result and its items, filtered by result and keyset-paged, viewable for good.
 */
export function BulkReplayView({ jobId, canAct }: { jobId: number; canAct: boolean }) {
  const tz = useTimeZone();
  const [state, setState] = useQueryStates(bulkReplayItemsSearch, { history: 'push' });
  const params = filterParams(state);
  const query = useQuery({
    ...bulkReplayDetailQuery.options({ id: jobId, ...params }),
    placeholderData: keepPreviousData,
    // Live progress: every second while the worker runs it.
    refetchInterval: (q) => (q.state.data?.job.status === 'RUNNING' ? 1_000 : false),
  });
  const failure = query.error instanceof ApiError ? query.error : null;
  const detail = query.data;
  if (!detail)
    return query.error ? <ErrorState detail={`${failure?.code ?? 'ERROR'}: ${query.error.message}`} /> : null;
  const { job, counts } = detail;
  const now = new Date(detail.serverNowMs);
  const percent = job.itemCount === 0 ? 100 : Math.floor((job.processedCount / job.itemCount) * 100);
  const { asOfMs, ...filter } = job.filter;
  const requeue = job.action === 'REQUEUE';

  return (
    <div className="space-y-6">
      <section
        aria-label="Bulk replay"
        className="rounded-lg border border-zinc-200 bg-white p-4 dark:border-zinc-800 dark:bg-zinc-900"
      >
        <div className="mb-4 flex flex-wrap items-center justify-between gap-3">
          <span data-testid="bulk-status">
            <StatusBadge status={job.status} />
          </span>
          {canAct ? <BulkReplayActions detail={detail} /> : null}
        </div>
        <dl className="grid grid-cols-2 gap-4 md:grid-cols-3">
          <Fact label="Action">{ACTION_TEXT[job.action]}</Fact>
          <Fact label="Selects">
            {requeue
              ? `the ${filter.receiptIds?.length ?? 0} selected settlements still retry-scheduled`
              : describeDeadLetterFilter(filter)}
            , as of <ZonedTime at={asOfMs} />
          </Fact>
          <Fact label="Note">{job.note}</Fact>
          <Fact label="Previewed by">
            {job.createdBy}, <TimeAgo at={new Date(job.createdAt)} now={now} />
          </Fact>
          <Fact label="Started by">
            {job.startedBy && job.startedAt ? (
              <>
                {job.startedBy}, <TimeAgo at={new Date(job.startedAt)} now={now} />
              </>
            ) : (
              'not started'
            )}
          </Fact>
          <Fact label="Finished">
            {job.finishedAt ? <TimeAgo at={new Date(job.finishedAt)} now={now} /> : 'not yet'}
          </Fact>
          <Fact label="Worked by">
            <span data-testid="bulk-worker">{job.workerInstance ?? 'no instance yet'}</span>
          </Fact>
        </dl>
        <div className="mt-4">
          <div className="mb-1 flex justify-between text-sm">
            <span id="bulk-progress-label">Progress</span>
            <span data-testid="bulk-progress" className="tabular-nums">
              {job.processedCount.toLocaleString('en-US')} of {job.itemCount.toLocaleString('en-US')} items processed
            </span>
          </div>
          <div
            role="progressbar"
            aria-labelledby="bulk-progress-label"
            aria-valuemin={0}
            aria-valuemax={job.itemCount}
            aria-valuenow={job.processedCount}
            className="h-2 overflow-hidden rounded bg-zinc-200 dark:bg-zinc-800"
          >
            <div className="h-full bg-sky-700 dark:bg-sky-400" style={{ width: `${percent}%` }} />
          </div>
        </div>
      </section>

      <section aria-labelledby="bulk-items" className="space-y-3">
        <h2 id="bulk-items" className="text-sm font-semibold">
          Items by result
        </h2>
        <ul className="flex flex-wrap gap-2" data-testid="bulk-counts">
          <li>
            <button
              type="button"
              className={CHIP}
              aria-pressed={!state.result}
              onClick={() => void setState({ result: null, after: null })}
            >
              All items <span className="tabular-nums font-medium">{job.itemCount.toLocaleString('en-US')}</span>
            </button>
          </li>
          {BULK_ITEM_RESULTS.map((result) => (
            <li key={result}>
              <button
                type="button"
                className={CHIP}
                aria-pressed={state.result === result}
                data-result={result}
                onClick={() => void setState({ result, after: null })}
              >
                <span className="font-mono text-xs">{result}</span>{' '}
                <span className="tabular-nums font-medium">{counts[result].toLocaleString('en-US')}</span>
              </button>
            </li>
          ))}
        </ul>
        {query.isError ? <ErrorState detail={`${failure?.code ?? 'ERROR'}: ${query.error.message}`} /> : null}
        <DataTable
          caption={`Items of bulk replay ${jobId}`}
          head={[
            'Receipt',
            tz.heading(requeue ? 'Next visible at preview' : 'Recorded at preview', now),
            'Result',
            tz.heading('Processed', now),
          ]}
          empty={detail.items.length === 0}
        >
          {detail.items.map((item) => (
            <tr key={item.receiptId} data-receipt={item.receiptId}>
              <Cell mono>
                <Link href={receiptHref(item.receiptId)} prefetch={false} className={LINK}>
                  {item.receiptId}
                </Link>
              </Cell>
              <Cell>{tz.inColumn(item.recordedAtMs, now)}</Cell>
              <Cell mono>{item.result ?? 'pending'}</Cell>
              <Cell>{item.processedAt ? <TimeAgo at={new Date(item.processedAt)} now={now} column /> : DASH}</Cell>
            </tr>
          ))}
        </DataTable>
        <nav aria-label="Item pages" className="flex gap-2">
          <Button disabled={!state.after} onClick={() => void setState({ after: null })}>
            First page
          </Button>
          <Button disabled={!detail.nextAfter} onClick={() => void setState({ after: detail.nextAfter })}>
            Next page
          </Button>
        </nav>
      </section>
    </div>
  );
}
