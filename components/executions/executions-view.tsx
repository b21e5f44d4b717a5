'use client';

import { keepPreviousData, useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useQueryStates } from 'nuqs';
import { BATCH_STATUSES } from '@/lib/domain/batch-status';
import { formatCappedCount } from '@/lib/domain/capped-count';
import { executionListQuery, jobNamesQuery } from '@/lib/reads/queries';
import { executionsSearch, type ExecutionsSearch } from '@/lib/url-state/executions';
import { SearchEverywhereLink } from '../search/search-everywhere-link';
import { Button } from '../ui/button';
import { KeysetPager } from '../ui/keyset-pager';
import { ErrorState, hasFilters, LoadingRow, NoMatches } from '../ui/states';
import { StaleBadge, StatusBadge } from '../ui/status-badge';
import { useCalmRows } from '../ui/calm-rows';
import { Cell, DataTable } from '../ui/table';
import { TimeAgo } from '../ui/time-ago';
import { useTimeZone } from '../ui/time-zone';

const field = 'rounded-md border border-zinc-300 bg-white px-2 py-1.5 text-sm dark:border-zinc-700 dark:bg-zinc-950';

export function ExecutionsView() {
  const [filters, setFilters] = useQueryStates(executionsSearch, { history: 'push' });
  const live = useQuery({
    ...executionListQuery.options(filters),
    placeholderData: keepPreviousData,
  });
  const { error, isFetching } = live;
  // Rows being read stay put; newer ones wait behind "Updates waiting".
  const [data, calm] = useCalmRows(
    live,
    filters,
    (page) => page.items,
    (row) => row.id,
  );
  const jobNames = useQuery(jobNamesQuery.options()).data ?? [];
  const set = (patch: Partial<ExecutionsSearch>) => void setFilters({ ...patch, cursor: null });
  // datetime-local has no zone: the fields are read and shown in the user's, named in their labels; the URL keeps
  // the instant in UTC, so a link shows the same executions to anyone.
  const tz = useTimeZone();
  const now = new Date(data?.serverNow ?? Date.now());

  return (
    <div className="space-y-4">
      <form
        role="search"
        aria-label="Filter executions"
        className="flex flex-wrap items-end gap-3"
        onSubmit={(event) => {
          event.preventDefault();
          const value = new FormData(event.currentTarget).get('q');
          set({ q: typeof value === 'string' && value.trim() ? value.trim() : null });
        }}
      >
        <label className="flex flex-col text-xs font-medium">
          Search (execution or instance id)
          <input
            key={filters.q ?? ''}
            name="q"
            defaultValue={filters.q ?? ''}
            inputMode="numeric"
            placeholder="Digits"
            className={`${field} mt-1 w-56`}
          />
        </label>
        <label className="flex flex-col text-xs font-medium">
          Status
          <select
            value={filters.status ?? ''}
            onChange={(e) => set({ status: BATCH_STATUSES.find((s) => s === e.target.value) ?? null })}
            className={`${field} mt-1`}
          >
            <option value="">Any status</option>
            {BATCH_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label className="flex flex-col text-xs font-medium">
          Job
          <select
            value={filters.job ?? ''}
            onChange={(e) => set({ job: e.target.value || null })}
            className={`${field} mt-1`}
          >
            <option value="">Any job</option>
            {jobNames.map((j) => (
              <option key={j} value={j}>
                {j}
              </option>
            ))}
          </select>
        </label>
        <label className="flex flex-col text-xs font-medium">
          Updated from ({tz.zone})
          <input
            type="datetime-local"
            value={tz.toInput(filters.updatedFrom)}
            onChange={(e) => set({ updatedFrom: tz.fromInput(e.target.value) })}
            className={`${field} mt-1`}
          />
        </label>
        <label className="flex flex-col text-xs font-medium">
          Updated before ({tz.zone})
          <input
            type="datetime-local"
            value={tz.toInput(filters.updatedTo)}
            onChange={(e) => set({ updatedTo: tz.fromInput(e.target.value) })}
            className={`${field} mt-1`}
          />
        </label>
        <label className="flex items-center gap-2 pb-2 text-sm">
          <input
            type="checkbox"
            checked={filters.stale === '1'}
            onChange={(e) => set({ stale: e.target.checked ? '1' : null })}
          />
          Stale only
        </label>
        <Button type="submit">Search</Button>
        <Button onClick={() => void setFilters(null)}>Clear</Button>
      </form>

      {error ? <ErrorState detail={`${(error as Error).message}`} /> : null}
      {filters.q && !/^\d+$/.test(filters.q.trim()) ? <SearchEverywhereLink text={filters.q.trim()} /> : null}
      {data?.indexWarning ? (
        <p
          role="note"
          className={
            'rounded-md border-l-4 border-amber-500 bg-amber-50 p-2 text-sm text-amber-950 dark:bg-amber-950 ' +
            'dark:text-amber-50'
          }
        >
          {data.indexWarning}
        </p>
      ) : null}
      <p className="text-sm text-zinc-600 dark:text-zinc-400" aria-live="polite">
        {data ? `${formatCappedCount(data.total)} executions match` : ' '}
        {isFetching ? ' · refreshing…' : ''}
      </p>
      <DataTable
        caption="Executions"
        calm={calm}
        head={['Execution', 'Job', 'Status', 'Attempt', 'Version', 'Owner', tz.heading('Updated', now)]}
        empty={
          data?.items.length === 0 &&
          (hasFilters(filters) ? <NoMatches noun="executions" onClear={() => void setFilters(null)} /> : true)
        }
      >
        {!data ? <LoadingRow columns={7} /> : null}
        {data?.items.map((row) => (
          <tr key={row.id}>
            <Cell mono>
              <Link
                href={`/executions/${row.id}`}
                prefetch={false}
                className="text-sky-800 underline dark:text-sky-300"
              >
                {row.id}
              </Link>
            </Cell>
            <Cell>{row.jobName}</Cell>
            <Cell>
              <StatusBadge status={row.status} />
              {row.stale ? <StaleBadge className="ml-2" /> : null}
              {row.stopRequested ? <span className="ml-2 text-xs">stop requested</span> : null}
            </Cell>
            <Cell>{row.attempt}</Cell>
            <Cell>{row.version}</Cell>
            <Cell>
              {row.owner === 'ABSENT' ? 'none' : row.owner === 'CURRENT_PROCESS' ? 'this process' : 'other process'}
            </Cell>
            <Cell>
              <TimeAgo at={new Date(row.updatedAt)} now={now} column />
            </Cell>
          </tr>
        ))}
      </DataTable>
      <KeysetPager
        label="Pages"
        cursor={filters.cursor}
        nextCursor={data?.nextCursor}
        onChange={(cursor) => void setFilters({ cursor })}
      />
    </div>
  );
}
