import type { OrchestrationRetryPolicy } from '@/lib/queries/orchestration-detail-types';
import { Fact } from '../ui/fact';

const units = (n: number) => `${n.toLocaleString('en-US')} unit${n === 1 ? '' : 's'}`;

/**
 * The declared policy. The checkpoint format carries the policy but not what was spent of it: the
 * runtime passes attempts and budget used to each retry decision, so neither is shown as a figure.
 */
export function RetryPolicy({ retry }: { retry: OrchestrationRetryPolicy | null }) {
  if (!retry) return <p className="text-sm">No retry policy declared: every retry is refused (RetryNotDeclared).</p>;
  return (
    <>
      {retry.notDeclared ? (
        <p role="note" className="mb-3 text-sm font-medium text-red-800 dark:text-red-300">
          Retries are refused whatever was used (RetryNotDeclared):{' '}
          {retry.retryable
            ? 'the idempotency key is blank, so a retry could repeat an external effect'
            : 'the policy says not retryable'}
          .
        </p>
      ) : null}
      <dl className="grid grid-cols-2 gap-4 md:grid-cols-3">
        <Fact label="Retryable">{retry.retryable ? 'yes' : 'no'}</Fact>
        <Fact label="Attempts allowed">at most {retry.maxAttempts.toLocaleString('en-US')}</Fact>
        <Fact label="Budget">{units(retry.budgetUnits)}</Fact>
        <Fact label="Backoff per retry">{units(retry.backoffUnits)}</Fact>
        <Fact label="Idempotency key">
          {retry.idempotencyKey.trim() === '' ? (
            'blank'
          ) : (
            <span className="font-mono text-xs [overflow-wrap:anywhere]">{retry.idempotencyKey}</span>
          )}
        </Fact>
        <Fact label="Used so far">
          <span className="text-zinc-600 dark:text-zinc-400">
            not recorded in the checkpoint: a retry is allowed while attempts used stay below{' '}
            {retry.maxAttempts.toLocaleString('en-US')} and budget used below {units(retry.budgetUnits)}
          </span>
        </Fact>
      </dl>
    </>
  );
}
