'use client';

import { keepPreviousData, useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useQueryStates } from 'nuqs';
import { FAILURE_CATEGORIES, FAULT_PHASES } from '@/lib/domain/batch-status';
import { jobNamesQuery, retryKeyListQuery } from '@/lib/reads/queries';
import { RetryKeyTabs } from './retry-key-tabs';
import {
  corruptEnvelopesParams,
  retryKeysHref,
  retryKeysSearch,
  unresolvedKeysParams,
} from '@/lib/url-state/retry-keys';
import { Button } from '../ui/button';
import { CopyButton } from '../ui/copy-button';
import { ErrorState } from '../ui/states';
import { StatusBadge } from '../ui/status-badge';
import { useCalmRows } from '../ui/calm-rows';
import { Cell, DataTable } from '../ui/table';

const field =
  'mt-1 rounded-md border border-zinc-300 bg-white px-2 py-1.5 text-sm dark:border-zinc-700 dark:bg-zinc-950';
const LINK = 'mt-3 inline-block text-sm font-medium text-sky-800 underline dark:text-sky-300';

function useRetryKeyList(
  params: ReturnType<typeof unresolvedKeysParams> | ReturnType<typeof corruptEnvelopesParams>,
  enabled = true,
) {
  const query = useQuery({
    ...retryKeyListQuery.options(params),
    placeholderData: keepPreviousData,
    enabled,
  });
  // Rows being read stay put; newer ones wait behind "Updates waiting".
  const [data, calm] = useCalmRows(
    query,
    params,
    (page) => page.rows,
    (row) => (row.kind === 'key' ? `${row.stepId}:${row.key}` : row.stepId),
  );
  return { ...query, data, calm };
}

/** One filter as a select: "any" first, then each option as its own value. */
function FilterSelect({
  label,
  name,
  value,
  anyLabel,
  options,
}: {
  label: string;
  name: string;
  value: string | null;
  anyLabel: string;
  options: readonly string[];
}) {
  return (
    <label className="flex flex-col text-xs font-medium">
      {label}
      <select name={name} defaultValue={value ?? ''} className={field}>
        <option value="">{anyLabel}</option>
        {options.map((option) => (
          <option key={option}>{option}</option>
        ))}
      </select>
    </label>
  );
}

/** A row's execution, linked to its page, and the execution's job. */
function ExecutionCells({ executionId, jobName }: { executionId: number; jobName: string }) {
  return (
    <>
      <Cell mono>
        <Link href={`/executions/${executionId}`} prefetch={false} className="text-sky-800 underline dark:text-sky-300">
          {executionId}
        </Link>
      </Cell>
      <Cell>{jobName}</Cell>
    </>
  );
}

/** Unresolved retry keys and corrupt envelopes, filters and cursors in the URL. */
export function RetryKeysView() {
  const [search, setSearch] = useQueryStates(retryKeysSearch, { history: 'push' });
  const show = search.show ?? 'keys';
  // The keys only on their own tab; the corrupt envelopes on either, for the count in their tab's label.
  const keys = useRetryKeyList(unresolvedKeysParams(search), show === 'keys');
  const corrupt = useRetryKeyList(corruptEnvelopesParams(search));
  const shownError = (show === 'keys' ? keys : corrupt).error;
  const jobs = useQuery(jobNamesQuery.options()).data ?? [];
  return (
    <>
      <form
        key={`${search.job}|${search.phase}|${search.category}`}
        role="search"
        aria-label="Filter retry keys"
        className="mb-4 flex flex-wrap items-end gap-3"
        onSubmit={(event) => {
          event.preventDefault();
          const form = new FormData(event.currentTarget);
          const text = (name: string) =>
            typeof form.get(name) === 'string' && form.get(name) !== '' ? (form.get(name) as string) : null;
          void setSearch({
            job: text('job'),
            phase: FAULT_PHASES.find((p) => p === text('phase')) ?? null,
            category: FAILURE_CATEGORIES.find((c) => c === text('category')) ?? null,
            cursor: null,
            corruptCursor: null,
          });
        }}
      >
        <FilterSelect label="Job" name="job" value={search.job} anyLabel="Any job" options={jobs} />
        <FilterSelect label="Phase" name="phase" value={search.phase} anyLabel="Any phase" options={FAULT_PHASES} />
        <FilterSelect
          label="Category"
          name="category"
          value={search.category}
          anyLabel="Any category"
          options={FAILURE_CATEGORIES}
        />
        <Button type="submit">Apply</Button>
        <Link href="/retry-keys" className="pb-1.5 text-sm text-sky-800 underline dark:text-sky-300">
          Clear
        </Link>
      </form>
      {search.execution !== null ? (
        <p className="mb-3 text-sm" data-testid="retry-keys-execution">
          Only the steps of execution {search.execution}.{' '}
          <Link href={`/executions/${search.execution}`} className="text-sky-800 underline dark:text-sky-300">
            Back to execution {search.execution}
          </Link>
          {' · '}
          <Link
            href={retryKeysHref({ ...search, execution: null, cursor: null, corruptCursor: null })}
            className="text-sky-800 underline dark:text-sky-300"
          >
            Every execution’s keys
          </Link>
        </p>
      ) : null}
      <RetryKeyTabs
        show={show}
        keysHref={retryKeysHref({ ...search, show: null, corruptCursor: null })}
        corruptHref={retryKeysHref({ ...search, show: 'corrupt', cursor: null })}
        corrupt={corrupt.data ? { count: corrupt.data.rows.length, more: Boolean(corrupt.data.nextCursor) } : null}
      />
      {shownError ? <ErrorState detail={shownError.message} /> : null}
      {show === 'keys' ? (
        <section aria-labelledby="keys" className="mb-8">
          <h2 id="keys" className="mb-2 text-sm font-semibold">
            Unresolved keys
          </h2>
          <DataTable
            caption="Unresolved retry keys"
            calm={keys.calm}
            head={['Key', 'Phase', 'Category', 'Ordinal / limit', 'Classifier', 'Step', 'Execution', 'Job']}
            empty={keys.data?.rows.length === 0}
          >
            {keys.data?.rows.map((row) =>
              row.kind === 'key' ? (
                <tr key={`${row.stepId}:${row.key}`}>
                  <Cell mono>
                    {row.keyPrefix}…<CopyButton value={row.key} label={`Copy retry key ${row.keyPrefix}`} />
                  </Cell>
                  <Cell>{row.phase}</Cell>
                  <Cell mono>{row.category}</Cell>
                  <Cell>
                    {row.ordinal} / {row.limits ? row.limits.retryLimit : 'limit unknown'}
                  </Cell>
                  <Cell mono>{row.revision}</Cell>
                  <Cell>
                    <Link
                      href={`/executions/${row.executionId}#step-${row.stepId}`}
                      prefetch={false}
                      className="text-sky-800 underline dark:text-sky-300"
                    >
                      {row.stepLogicalId}
                    </Link>{' '}
                    <span className="font-mono text-xs text-zinc-600 dark:text-zinc-400">#{row.stepId}</span>
                  </Cell>
                  <ExecutionCells executionId={row.executionId} jobName={row.jobName} />
                </tr>
              ) : null,
            )}
          </DataTable>
          {keys.data?.nextCursor ? (
            <Link href={retryKeysHref({ ...search, cursor: keys.data.nextCursor })} className={LINK}>
              Next page
            </Link>
          ) : null}
        </section>
      ) : (
        <section aria-labelledby="corrupt">
          <h2 id="corrupt" className="mb-2 text-sm font-semibold">
            Corrupt envelopes
          </h2>
          <p className="mb-2 text-sm text-zinc-600 dark:text-zinc-400">
            No action may act on a step whose envelope fails validation.
          </p>
          <DataTable
            caption="Corrupt fault-state envelopes"
            calm={corrupt.calm}
            head={['Step', 'Status', 'Execution', 'Job', 'Validation error']}
            empty={corrupt.data?.rows.length === 0}
          >
            {corrupt.data?.rows.map((row) =>
              row.kind === 'corrupt' ? (
                <tr key={row.stepId}>
                  <Cell>
                    {row.stepLogicalId}{' '}
                    <span className="font-mono text-xs text-zinc-600 dark:text-zinc-400">#{row.stepId}</span>
                  </Cell>
                  <Cell>
                    <StatusBadge status={row.stepStatus} />
                  </Cell>
                  <ExecutionCells executionId={row.executionId} jobName={row.jobName} />
                  <Cell>
                    <StatusBadge status="CORRUPT" /> <span className="font-mono text-xs">{row.error.kind}</span>{' '}
                    {row.message}
                  </Cell>
                </tr>
              ) : null,
            )}
          </DataTable>
          {corrupt.data?.nextCursor ? (
            <Link href={retryKeysHref({ ...search, corruptCursor: corrupt.data.nextCursor })} className={LINK}>
              More corrupt envelopes
            </Link>
          ) : null}
        </section>
      )}
    </>
  );
}
