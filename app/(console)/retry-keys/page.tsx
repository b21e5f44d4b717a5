import type { Metadata } from 'next';
import { PageHeader } from '@/components/ui/page-header';
import { Cell, DataTable } from '@/components/ui/table';
import { listUnresolvedRetryKeys } from '@/lib/queries/lists';
import { runtime } from '@/lib/server/runtime';

export const metadata: Metadata = { title: 'Retry keys' };

export default async function RetryKeysPage() {
  const rows = await listUnresolvedRetryKeys(runtime().db);
  return (
    <>
      <PageHeader title="Retry keys" description="Unresolved retry keys held in steps' fault-state envelopes." />
      <DataTable caption="Unresolved retry keys" head={['Key', 'Phase', 'Category', 'Ordinal', 'Classifier', 'Step', 'Execution', 'Job']} empty={rows.length === 0}>
        {rows.map((row) => (
          <tr key={`${row.stepId}:${row.keyPrefix}:${row.phase}:${row.ordinal}`}>
            <Cell mono>{row.keyPrefix}…</Cell>
            <Cell>{row.phase}</Cell>
            <Cell mono>{row.category}</Cell>
            <Cell>{row.ordinal}</Cell>
            <Cell mono>{row.revision}</Cell>
            <Cell>{row.stepLogicalId}</Cell>
            <Cell mono>{row.executionId}</Cell>
            <Cell>{row.jobName}</Cell>
          </tr>
        ))}
      </DataTable>
    </>
  );
}
