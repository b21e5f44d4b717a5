import type { NeedsYouLinks } from '../domain/needs-you';
import { isFailureCode } from '../domain/settlement-vocabulary';
import { executionsHref } from './executions';
import { recoveryHref } from './recovery';
import { retryKeysHref } from './retry-keys';
import { deadLettersHref } from './settlements';

/** Each needs-you item's filtered list (docs/console.md#needs-you). */
export const needsYouLinks: NeedsYouLinks = {
  pending: recoveryHref({ status: 'PENDING' }),
  proposal: (id) => `/recovery/${id}`,
  staleBetween: (from, to) => executionsHref({ stale: '1', updatedFrom: from, updatedTo: to }),
  corrupt: retryKeysHref({ show: 'corrupt' }),
  leases: '/recovery#orchestrations',
  // `other` gathers codes outside the vocabulary, which the list cannot filter by: all dead letters then.
  deadLetters: (reason) => (isFailureCode(reason) ? deadLettersHref({ reason }) : deadLettersHref({})),
};
