import { BATCH_STATUSES, type BatchStatus } from '../domain/batch-status';
import { QUEUE_STATES, type QueueState } from '../domain/queue-state';
import { FAILURE_CODES, type FailureCode } from '../domain/settlement-vocabulary';
import { executionsHref } from './executions';
import { recoveryHref } from './recovery';
import { deadLettersHref, queueHref } from './settlements';

/**
 * Every link the overview can show, made on the server: the overview's counts change
 * live in the browser, but they only ever link to closed vocabularies, so the page
 * passes these and the browser does not download the URL serializers for them.
 */
export interface OverviewLinks {
  stale: string;
  pending: string;
  queue: string;
  executionsByStatus: Record<BatchStatus, string>;
  queueByState: Record<QueueState, string>;
  deadLettersByReason: Record<FailureCode, string>;
}

const each = <K extends string>(keys: readonly K[], href: (key: K) => string) =>
  Object.fromEntries(keys.map((key) => [key, href(key)])) as Record<K, string>;

export const overviewLinks = (): OverviewLinks => ({
  stale: executionsHref({ stale: '1' }),
  pending: recoveryHref({ status: 'PENDING' }),
  queue: queueHref({ state: 'all' }),
  executionsByStatus: each(BATCH_STATUSES, (status) => executionsHref({ status })),
  queueByState: each(QUEUE_STATES, (state) => queueHref({ state })),
  deadLettersByReason: each(FAILURE_CODES, (reason) => deadLettersHref({ reason })),
});
