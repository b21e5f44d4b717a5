import type { Metadata } from 'next';
import Link from 'next/link';
import { PageHeader } from '@/components/ui/page-header';
import { StatusBadge } from '@/components/ui/status-badge';
import { Cell, DataTable } from '@/components/ui/table';
import { TimeAgo } from '@/components/ui/time-ago';
import { BATCH_STATUSES } from '@/lib/domain/batch-status';
import { listExecutions } from '@/lib/queries/executions';
import { serverNow } from '@/lib/queries/clock';
import { runtime } from '@/lib/server/runtime';

export const metadata: Metadata = { title: 'Executions' };

export default async function ExecutionsPage({ searchParams }: { searchParams: Promise<{ status?: string; before?: string }> }) {
  const params = await searchParams;
  const before = params.before && /^\d+$/.test(params.before) ? Number(params.before) : undefined;
  const { db } = runtime();
  const [{ rows, nextCursor }, now] = await Promise.all([
    listExecutions(db, { status: params.status, before }),
    serverNow(db),
  ]);
  const link = (extra: Record<string, string | undefined>) => {
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries({ status: params.status, ...extra })) if (v) query.set(k, v);
    const text = query.toString();
    return text ? `/executions?${text}` : '/executions';
  };
  return (
    <>
      <PageHeader title="Executions" description="Job executions of the oxide-batch runtime, newest first." />
      <nav aria-label="Filter by status" className="mb-4 flex flex-wrap gap-2 text-sm">
        <Link href={link({ status: undefined })} aria-current={!params.status ? 'page' : undefined} className="rounded-md border border-zinc-300 px-2 py-1 aria-[current=page]:bg-zinc-900 aria-[current=page]:text-white dark:border-zinc-700 dark:aria-[current=page]:bg-zinc-100 dark:aria-[current=page]:text-zinc-900">
          All
        </Link>
        {BATCH_STATUSES.map((status) => (
          <Link key={status} href={`/executions?status=${status}`} aria-current={params.status === status ? 'page' : undefined} className="rounded-md border border-zinc-300 px-2 py-1 aria-[current=page]:bg-zinc-900 aria-[current=page]:text-white dark:border-zinc-700 dark:aria-[current=page]:bg-zinc-100 dark:aria-[current=page]:text-zinc-900">
            {status}
          </Link>
        ))}
      </nav>
      <DataTable caption="Executions" head={['Execution', 'Job', 'Status', 'Attempt', 'Version', 'Owner', 'Updated']} empty={rows.length === 0}>
        {rows.map((row) => (
          <tr key={row.id}>
            <Cell mono>{row.id}</Cell>
            <Cell>{row.jobName}</Cell>
            <Cell><StatusBadge status={row.status} />{row.stopRequested ? <span className="ml-2 text-xs">stop requested</span> : null}</Cell>
            <Cell>{row.attempt}</Cell>
            <Cell>{row.version}</Cell>
            <Cell>{row.owner === 'ABSENT' ? 'none' : 'other process'}</Cell>
            <Cell><TimeAgo at={new Date(row.updatedAt)} now={new Date(now)} /></Cell>
          </tr>
        ))}
      </DataTable>
      {nextCursor ? (
        <div className="mt-4">
          <Link href={link({ before: String(nextCursor) })} className="text-sm font-medium text-sky-800 underline dark:text-sky-300">
            Older executions
          </Link>
        </div>
      ) : null}
    </>
  );
}
