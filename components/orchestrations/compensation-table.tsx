import type { OrchestrationCompensationStep } from '@/lib/queries/orchestration-detail-types';
import { Cell, DataTable } from '../ui/table';

const ordinal = (n: number) => {
  const suffix =
    n % 10 === 1 && n % 100 !== 11
      ? 'st'
      : n % 10 === 2 && n % 100 !== 12
        ? 'nd'
        : n % 10 === 3 && n % 100 !== 13
          ? 'rd'
          : 'th';
  return `${n}${suffix}`;
};

/** The declared undo steps in their order, and when each would run (in reverse, all or none). */
export function CompensationTable({
  steps,
  authorized,
}: {
  steps: OrchestrationCompensationStep[];
  authorized: boolean;
}) {
  return (
    <>
      <p className="mb-2 text-xs text-zinc-600 dark:text-zinc-400">
        Declared in order; a compensation runs them in reverse, and only when every step is bound to the authorization
        snapshot.
      </p>
      {steps.length > 0 && !authorized ? (
        <p role="note" className="mb-2 text-sm font-medium text-red-800 dark:text-red-300">
          The plan would be refused as a whole (CompensationUnauthorized): a step is not bound to the authorization
          snapshot or names no capability.
        </p>
      ) : null}
      <DataTable
        caption="Compensation steps"
        head={['Order', 'Capability', 'Authorization', 'Runs']}
        empty={steps.length === 0 ? 'No compensation steps declared.' : false}
      >
        {steps.map((step, index) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: steps are a fixed, ordered list that may repeat a capability
          <tr key={`${index}-${step.capabilityId}`}>
            <Cell>{step.order}</Cell>
            <td className="min-w-40 px-3 py-2 font-mono text-xs [overflow-wrap:anywhere]">
              {step.capabilityId || <span className="font-sans text-red-800 dark:text-red-300">blank</span>}
            </td>
            <Cell>
              <span className="font-mono text-xs" title={step.authorizationDigest}>
                {step.authorizationDigest.slice(0, 12)}…
              </span>{' '}
              {step.boundToAuthorization ? (
                <span className="text-xs text-zinc-600 dark:text-zinc-400">the authorization snapshot</span>
              ) : (
                <span className="text-xs font-medium text-red-800 dark:text-red-300">
                  not the authorization snapshot
                </span>
              )}
            </Cell>
            <Cell>{step.runsAt === null ? 'never (plan refused)' : ordinal(step.runsAt)}</Cell>
          </tr>
        ))}
      </DataTable>
    </>
  );
}
