'use client';

import { keepPreviousData, useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useQueryStates } from 'nuqs';
import { bulkReplaysSearch } from '@/lib/url-state/settlements';
import { ApiError } from '@/lib/http/read-json';
import { BULK_REPLAY_STATUSES } from '@/lib/queries/settlements-filter-types';
import { bulkReplayListQuery } from '@/lib/reads/queries';
import { Button } from '../ui/button';
import { ErrorState } from '../ui/states';
import { StatusBadge } from '../ui/status-badge';
import { useCalmRows } from '../ui/calm-rows';
import { Cell, DataTable } from '../ui/table';
import { TimeAgo } from '../ui/time-ago';
import { useTimeZone } from '../ui/time-zone';
import { filterParams } from './filter-params';
import { describeDeadLetterFilter } from './filter-summary';
import { LINK, bulkReplayHref } from './links';

const FIELD =
  'mt-1 block w-44 rounded-md border border-zinc-300 bg-white px-2 py-1.5 text-sm dark:border-zinc-700 ' +
  'dark:bg-zinc-950';

/** Every bulk replay job, newest first, with its status and progress; each links to its items. */
export function BulkReplayList() {
  const tz = useTimeZone();
  const [state, setState] = useQueryStates(bulkReplaysSearch, { history: 'push' });
  const params = filterParams(state);
  const query = useQuery({
    ...bulkReplayListQuery.options(params),
    placeholderData: keepPreviousData,
    refetchInterval: (q) => (q.state.data?.jobs.some((j) => j.status === 'RUNNING') ? 2_000 : false),
  });
  // Rows being read stay put; newer ones wait behind "Updates waiting".
  const [page, calm] = useCalmRows(
    query,
    params,
    (p) => p.jobs,
    (job) => job.id,
  );
  const failure = query.error instanceof ApiError ? query.error : null;
  const now = new Date(page?.serverNowMs ?? 0);
  return (
    <section aria-label="Bulk replays" className="space-y-4">
      <div>
        <label htmlFor="bulk-status-filter" className="block text-xs font-medium text-zinc-700 dark:text-zinc-300">
          Status
        </label>
        <select
          id="bulk-status-filter"
          value={state.status ?? ''}
          onChange={(e) =>
            void setState({ status: BULK_REPLAY_STATUSES.find((s) => s === e.target.value) ?? null, cursor: null })
          }
          className={FIELD}
        >
          <option value="">Any status (cancelled previews hidden)</option>
          {BULK_REPLAY_STATUSES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </div>
      {query.isError ? <ErrorState detail={`${failure?.code ?? 'ERROR'}: ${query.error.message}`} /> : null}
      <DataTable
        caption="Bulk replays"
        calm={calm}
        head={['Job', 'Status', 'Selects', 'Processed', 'Note', tz.heading('Previewed', now), 'Started by']}
        empty={page?.jobs.length === 0}
      >
        {page?.jobs.map((job) => (
          <tr key={job.id}>
            <Cell mono>
              <Link href={bulkReplayHref(job.id)} className={LINK}>
                {job.id}
              </Link>
            </Cell>
            <Cell>
              <StatusBadge status={job.status} />
            </Cell>
            <td className="max-w-72 px-3 py-2">
              {job.action === 'DISCARD' ? <span className="font-medium">Discard: </span> : null}
              {job.action === 'REQUEUE' ? (
                <>
                  <span className="font-medium">Requeue: </span>
                  {`${job.filter.receiptIds?.length ?? 0} selected retry-scheduled settlements`}
                </>
              ) : (
                describeDeadLetterFilter(job.filter)
              )}
            </td>
            <Cell>
              {job.processedCount.toLocaleString('en-US')} / {job.itemCount.toLocaleString('en-US')}
            </Cell>
            <td className="max-w-56 truncate px-3 py-2" title={job.note}>
              {job.note}
            </td>
            <Cell>
              {job.createdBy}, <TimeAgo at={new Date(job.createdAt)} now={now} column />
            </Cell>
            <Cell>{job.startedBy ?? <span className="text-zinc-500 dark:text-zinc-400">not started</span>}</Cell>
          </tr>
        ))}
      </DataTable>
      <nav aria-label="Bulk replay pages" className="flex gap-2">
        <Button disabled={!state.cursor} onClick={() => void setState({ cursor: null })}>
          Newest
        </Button>
        <Button disabled={!page?.nextCursor} onClick={() => void setState({ cursor: page?.nextCursor ?? null })}>
          Older
        </Button>
      </nav>
    </section>
  );
}
