import { createLoader, parseAsString, parseAsStringLiteral, type inferParserType } from 'nuqs/server';
import { FAILURE_CODES } from '../domain/settlement-vocabulary';
import { BULK_ITEM_RESULTS, BULK_REPLAY_STATUSES, QUEUE_STATE_FILTERS } from '../queries/settlements-filter-types';
import { CURSOR_WORD, oneOf, type FilterWords } from './filter-words';
import { withSearch } from './search-string';

/**
 * The settlement views' URL state, typed once for the server pages (loaders), the
 * client hooks and the links (serializers). The pages and the read API validate the
 * same params with the zod schemas of lib/queries/settlements-types.ts. Attempts and
 * ages stay text here on purpose: a value that does not parse reaches the API, which
 * names the field, instead of vanishing from the URL.
 */
export const settlementFiltersSearch = {
  q: parseAsString,
  reason: parseAsStringLiteral(FAILURE_CODES),
  minAttempts: parseAsString,
  maxAttempts: parseAsString,
  minAge: parseAsString,
  maxAge: parseAsString,
  cursor: parseAsString,
};
export const queueSearch = { ...settlementFiltersSearch, state: parseAsStringLiteral(QUEUE_STATE_FILTERS) };
export const bulkReplaysSearch = { status: parseAsStringLiteral(BULK_REPLAY_STATUSES), cursor: parseAsString };
export const bulkReplayItemsSearch = { result: parseAsStringLiteral(BULK_ITEM_RESULTS), after: parseAsString };

export type SettlementFiltersSearch = inferParserType<typeof settlementFiltersSearch>;
export type QueueSearch = inferParserType<typeof queueSearch>;

export const loadDeadLettersSearch = createLoader(settlementFiltersSearch);
export const loadQueueSearch = createLoader(queueSearch);
export const loadBulkReplaysSearch = createLoader(bulkReplaysSearch);
export const loadBulkReplayItemsSearch = createLoader(bulkReplayItemsSearch);

export const queueHref = (search: Partial<QueueSearch>) => withSearch('/settlements', search);
export const deadLettersHref = (search: Partial<SettlementFiltersSearch>) =>
  withSearch('/settlements/dead-letters', search);
export const bulkReplaysHref = (search: Partial<inferParserType<typeof bulkReplaysSearch>>) =>
  withSearch('/settlements/bulk', search);
export const bulkReplayHref = (jobId: number, search: Partial<inferParserType<typeof bulkReplayItemsSearch>> = {}) =>
  withSearch(`/settlements/bulk/${jobId}`, search);
/** A receipt's history page. Receipt ids are free text, so they are always encoded. */
export const receiptHref = (receiptId: string) => `/settlements/${encodeURIComponent(receiptId)}`;

const AGE_WORDS = 'an age such as 45s, 30m, 6h or 2d';
const ATTEMPT_WORDS = 'a whole number of attempts, such as 3';

/** The settlement filters in the pages' words, for the invalid-filter state and the form's field errors. */
export const SETTLEMENT_FILTER_WORDS: FilterWords = {
  q: { label: 'Receipt id starts with', expect: 'the start of a receipt id, on one line' },
  reason: { label: 'Reason code', expect: oneOf(FAILURE_CODES) },
  minAttempts: { label: 'Attempts at least', expect: ATTEMPT_WORDS },
  maxAttempts: { label: 'Attempts at most', expect: ATTEMPT_WORDS },
  minAge: { label: 'Age at least', expect: AGE_WORDS },
  maxAge: { label: 'Age at most', expect: AGE_WORDS },
  state: { label: 'Queue state', expect: oneOf(QUEUE_STATE_FILTERS) },
  cursor: CURSOR_WORD,
};

/** The bulk replay list's filters in the page's words. */
export const BULK_REPLAY_FILTER_WORDS: FilterWords = {
  status: { label: 'Status', expect: oneOf(BULK_REPLAY_STATUSES) },
  cursor: CURSOR_WORD,
};
