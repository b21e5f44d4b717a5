import Link from 'next/link';
import type { StepDetail } from '@/lib/queries/execution-detail-types';
import { StatusBadge } from '../ui/status-badge';
import { Cell, DataTable } from '../ui/table';

const triple = (r: Record<'read' | 'process' | 'write', number>) => `${r.read} / ${r.process} / ${r.write}`;

function FaultState({ state, keysHref }: { state: StepDetail['faultState']; keysHref: string }) {
  if (state.kind === 'empty') return <span className="text-zinc-600 dark:text-zinc-400">clean</span>;
  if (state.kind === 'corrupt') {
    return (
      <span className="text-red-800 dark:text-red-300">
        <StatusBadge status="CORRUPT" /> {state.error}
      </span>
    );
  }
  return (
    <span>
      <Link href={keysHref} prefetch={false} className="text-sky-800 underline dark:text-sky-300">
        {state.entries} unresolved
      </Link>{' '}
      <span className="text-zinc-600 dark:text-zinc-400">
        {state.limits
          ? `(state limit ${state.limits.stateLimit}, retry limit ${state.limits.retryLimit})`
          : '(limit unknown)'}
      </span>
    </span>
  );
}

/** `keysHref`: the retry keys list narrowed to this execution, where a step's unresolved count leads. */
export function StepsTable({ steps, keysHref }: { steps: StepDetail[]; keysHref: string }) {
  return (
    <DataTable
      caption="Steps"
      head={[
        'Step',
        'Status',
        'Read / processed / written',
        'Filtered',
        'Commits / rollbacks',
        'Retries (r/p/w)',
        'Skips (r/p/w)',
        'Checkpoint',
        'Fault state',
      ]}
      empty={steps.length === 0}
    >
      {steps.map((step) => (
        // The anchor a retry key's step links to (`/executions/<id>#step-<step id>`).
        <tr key={step.id} id={`step-${step.id}`} className="scroll-mt-16 target:bg-amber-50 dark:target:bg-amber-950">
          <Cell>
            {step.logicalId} <span className="font-mono text-xs text-zinc-600 dark:text-zinc-400">#{step.id}</span>
          </Cell>
          <Cell>
            <StatusBadge status={step.status} />
          </Cell>
          <Cell>{`${step.counts.read} / ${step.counts.processed} / ${step.counts.write}`}</Cell>
          <Cell>{step.counts.filter}</Cell>
          <Cell>{`${step.counts.commit} / ${step.counts.rollback}`}</Cell>
          <Cell>{triple(step.retries)}</Cell>
          <Cell>{triple(step.skips)}</Cell>
          <Cell mono wrap>
            {step.checkpoint
              ? `${step.checkpoint.schema} v${step.checkpoint.schemaVersion} (format ${step.checkpoint.format}, ` +
                `${step.checkpoint.encodedLen} B)`
              : 'none'}
          </Cell>
          <Cell wrap>
            <FaultState state={step.faultState} keysHref={keysHref} />
          </Cell>
        </tr>
      ))}
    </DataTable>
  );
}
