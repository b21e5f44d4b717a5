import type { DeadLetterFilterWords } from '../domain/dead-letter-filter-words';
import { QUEUE_STATES } from '../domain/queue-state';
import { BULK_REPLAY_ITEM_RESULTS, BULK_REPLAY_STATUSES } from '../domain/settlement-vocabulary';
import type { BulkReplayItemOutcome } from '../ports/bulk-replay';

/**
 * The settlement views' URL words and vocabularies, without zod: the client components
 * and the URL parsers import these, and settlements-types.ts (whose schemas validate
 * the same words on the server) re-exports them.
 */
export const QUEUE_STATE_FILTERS = [...QUEUE_STATES, 'all'] as const;

export const FILTER_KEYS = [
  'q',
  'reason',
  'minAttempts',
  'maxAttempts',
  'minAge',
  'maxAge',
] as const satisfies readonly (keyof DeadLetterFilterWords)[];

export { BULK_REPLAY_STATUSES };
export const BULK_ITEM_RESULTS = ['pending', ...BULK_REPLAY_ITEM_RESULTS, 'cancelled'] as const satisfies readonly (
  | BulkReplayItemOutcome
  | 'pending'
)[];
