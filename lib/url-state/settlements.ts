import { createLoader, createSerializer, parseAsString, parseAsStringLiteral, type inferParserType } from 'nuqs/server';
import { FAILURE_CODES } from '../domain/settlement-vocabulary';
import { BULK_ITEM_RESULTS, BULK_REPLAY_STATUSES, QUEUE_STATE_FILTERS } from '../queries/settlements-filter-types';

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

const serializeQueue = createSerializer(queueSearch);
const serializeDeadLetters = createSerializer(settlementFiltersSearch);
const serializeBulkReplays = createSerializer(bulkReplaysSearch);
const serializeBulkReplayItems = createSerializer(bulkReplayItemsSearch);

export const queueHref = (search: Partial<QueueSearch>) => serializeQueue('/settlements', search);
export const deadLettersHref = (search: Partial<SettlementFiltersSearch>) => serializeDeadLetters('/settlements/dead-letters', search);
export const bulkReplaysHref = (search: Partial<inferParserType<typeof bulkReplaysSearch>>) => serializeBulkReplays('/settlements/bulk', search);
export const bulkReplayHref = (jobId: number, search: Partial<inferParserType<typeof bulkReplayItemsSearch>> = {}) =>
  serializeBulkReplayItems(`/settlements/bulk/${jobId}`, search);
/** A receipt's history page. Receipt ids are free text, so they are always encoded. */
export const receiptHref = (receiptId: string) => `/settlements/${encodeURIComponent(receiptId)}`;
