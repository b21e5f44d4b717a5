import type { Metadata } from 'next';
import Link from 'next/link';
import { z } from 'zod';
import { Button } from '@/components/ui/button';
import { CopyButton } from '@/components/ui/copy-button';
import { PageHeader } from '@/components/ui/page-header';
import { StatusBadge } from '@/components/ui/status-badge';
import { Cell, DataTable } from '@/components/ui/table';
import { FAILURE_CATEGORIES, FAULT_PHASES } from '@/lib/domain/batch-status';
import { listJobNames } from '@/lib/queries/executions';
import { decodeRetryKeyCursor, encodeRetryKeyCursor, listRetryKeys } from '@/lib/queries/retry-keys';
import { cursorText, singleLineText } from '@/lib/domain/text';
import { page } from '@/lib/server/page';
import { runtime } from '@/lib/server/runtime';
import { InvalidFilters } from '@/components/ui/states';
import { RetryKeyTabs } from '@/components/retry-keys/retry-key-tabs';

export const metadata: Metadata = { title: 'Retry keys' };

const filtersSchema = z.object({
  job: singleLineText(128).optional(),
  phase: z.enum(FAULT_PHASES).optional().catch(undefined),
  category: z.enum(FAILURE_CATEGORIES).optional().catch(undefined),
  cursor: cursorText(200).optional(),
  corruptCursor: cursorText(200).optional(),
  /** Which list to show: the unresolved keys (default) or the corrupt envelopes, each a tab of its own. */
  show: z.enum(['keys', 'corrupt']).optional().catch(undefined),
});
const field = 'mt-1 rounded-md border border-zinc-300 bg-white px-2 py-1.5 text-sm dark:border-zinc-700 dark:bg-zinc-950';

export default page('read', { search: filtersSchema }, async function RetryKeysPage({ search }) {
  if (!search.ok) {
    return (
      <>
        <PageHeader title="Retry keys" description="Unresolved retry keys held in steps' fault-state envelopes, newest step first." />
        <InvalidFilters issues={search.issues} />
      </>
    );
  }
  const filters = search.value;
  const { db } = runtime();
  const base = { job: filters.job, phase: filters.phase, category: filters.category };
  const show = filters.show ?? 'keys';
  const [keys, corrupt, jobs] = await Promise.all([
    listRetryKeys(db, { ...base, only: 'keys', after: decodeRetryKeyCursor(filters.cursor), limit: 100 }),
    listRetryKeys(db, { job: filters.job, only: 'corrupt', after: decodeRetryKeyCursor(filters.corruptCursor), limit: 50 }),
    listJobNames(db),
  ]);
  const link = (extra: Record<string, string | undefined>) => {
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries({ ...base, ...extra })) if (v) query.set(k, v);
    return `/retry-keys?${query}`;
  };
  const tabs = <RetryKeyTabs show={show} keysHref={link({ show: undefined })} corruptHref={link({ show: 'corrupt' })} corruptCount={corrupt.rows.length} more={corrupt.nextCursor !== null} />;
  return (
    <>
      <PageHeader title="Retry keys" description="Unresolved retry keys held in steps' fault-state envelopes, newest step first." />
      <form role="search" aria-label="Filter retry keys" className="mb-4 flex flex-wrap items-end gap-3" action="/retry-keys">
        <label className="flex flex-col text-xs font-medium">
          Job
          <select name="job" defaultValue={filters.job ?? ''} className={field}>
            <option value="">Any job</option>
            {jobs.map((j) => <option key={j}>{j}</option>)}
          </select>
        </label>
        <label className="flex flex-col text-xs font-medium">
          Phase
          <select name="phase" defaultValue={filters.phase ?? ''} className={field}>
            <option value="">Any phase</option>
            {FAULT_PHASES.map((p) => <option key={p}>{p}</option>)}
          </select>
        </label>
        <label className="flex flex-col text-xs font-medium">
          Category
          <select name="category" defaultValue={filters.category ?? ''} className={field}>
            <option value="">Any category</option>
            {FAILURE_CATEGORIES.map((c) => <option key={c}>{c}</option>)}
          </select>
        </label>
        {show === 'corrupt' ? <input type="hidden" name="show" value="corrupt" /> : null}
        <Button type="submit">Apply</Button>
        <Link href="/retry-keys" className="pb-1.5 text-sm text-sky-800 underline dark:text-sky-300">Clear</Link>
      </form>
      {tabs}
      {show === 'keys' ? (
      <section aria-labelledby="keys" className="mb-8">
        <h2 id="keys" className="mb-2 text-sm font-semibold">Unresolved keys</h2>
        <DataTable caption="Unresolved retry keys" head={['Key', 'Phase', 'Category', 'Ordinal / limit', 'Classifier', 'Step', 'Execution', 'Job']} empty={keys.rows.length === 0}>
          {keys.rows.map((row) =>
            row.kind === 'key' ? (
              <tr key={`${row.stepId}:${row.key}`}>
                <Cell mono>{row.keyPrefix}…<CopyButton value={row.key} label={`Copy retry key ${row.keyPrefix}`} /></Cell>
                <Cell>{row.phase}</Cell>
                <Cell mono>{row.category}</Cell>
                <Cell>{row.ordinal} / {row.limits ? row.limits.retryLimit : 'limit unknown'}</Cell>
                <Cell mono>{row.revision}</Cell>
                <Cell>{row.stepLogicalId} <span className="font-mono text-xs text-zinc-600 dark:text-zinc-400">#{row.stepId}</span></Cell>
                <Cell mono><Link href={`/executions/${row.executionId}`} className="text-sky-800 underline dark:text-sky-300">{row.executionId}</Link></Cell>
                <Cell>{row.jobName}</Cell>
              </tr>
            ) : null,
          )}
        </DataTable>
        {keys.nextCursor ? (
          <Link href={link({ cursor: encodeRetryKeyCursor(keys.nextCursor) })} className="mt-3 inline-block text-sm font-medium text-sky-800 underline dark:text-sky-300">Next page</Link>
        ) : null}
      </section>
      ) : (
      <section aria-labelledby="corrupt">
        <h2 id="corrupt" className="mb-2 text-sm font-semibold">Corrupt envelopes</h2>
        <p className="mb-2 text-sm text-zinc-600 dark:text-zinc-400">No action may act on a step whose envelope fails validation.</p>
        <DataTable caption="Corrupt fault-state envelopes" head={['Step', 'Status', 'Execution', 'Job', 'Validation error']} empty={corrupt.rows.length === 0}>
          {corrupt.rows.map((row) =>
            row.kind === 'corrupt' ? (
              <tr key={row.stepId}>
                <Cell>{row.stepLogicalId} <span className="font-mono text-xs text-zinc-600 dark:text-zinc-400">#{row.stepId}</span></Cell>
                <Cell><StatusBadge status={row.stepStatus} /></Cell>
                <Cell mono><Link href={`/executions/${row.executionId}`} className="text-sky-800 underline dark:text-sky-300">{row.executionId}</Link></Cell>
                <Cell>{row.jobName}</Cell>
                <Cell><StatusBadge status="CORRUPT" /> <span className="font-mono text-xs">{row.error.kind}</span> {row.message}</Cell>
              </tr>
            ) : null,
          )}
        </DataTable>
        {corrupt.nextCursor ? (
          <Link href={link({ show: 'corrupt', corruptCursor: encodeRetryKeyCursor(corrupt.nextCursor) })} className="mt-3 inline-block text-sm font-medium text-sky-800 underline dark:text-sky-300">More corrupt envelopes</Link>
        ) : null}
      </section>
      )}
    </>
  );
});
