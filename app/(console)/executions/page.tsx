import type { Metadata } from 'next';
import { ExecutionsView } from '@/components/executions/executions-view';
import { toQueryString } from '@/components/data/fetch-json';
import { PageHeader } from '@/components/ui/page-header';
import { InvalidFilters } from '@/components/ui/states';
import { executionFiltersSchema, listExecutions, listJobNames } from '@/lib/queries/executions';
import { runtime } from '@/lib/server/runtime';

export const metadata: Metadata = { title: 'Executions' };

export default async function ExecutionsPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const raw = Object.fromEntries(Object.entries(await searchParams).filter((e): e is [string, string] => typeof e[1] === 'string'));
  const parsed = executionFiltersSchema.safeParse(raw);
  const { db, settings, ownerToken } = runtime();
  const header = <PageHeader title="Executions" description="Job executions of the oxide-batch runtime, most recently updated first." />;
  if (!parsed.success) {
    return (
      <>
        {header}
        <InvalidFilters issues={parsed.error.issues} />
      </>
    );
  }
  const [initial, jobNames] = await Promise.all([
    listExecutions(db, parsed.data, { staleThresholdMs: settings.staleThresholdMs, ownerToken }),
    listJobNames(db),
  ]);
  return (
    <>
      {header}
      <ExecutionsView initial={initial} initialKey={toQueryString(raw)} jobNames={jobNames} />
    </>
  );
}
