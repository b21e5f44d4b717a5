import {
  createLoader,
  createSerializer,
  parseAsInteger,
  parseAsString,
  parseAsStringLiteral,
  type inferParserType,
} from 'nuqs/server';
import { FAILURE_CATEGORIES, FAULT_PHASES } from '../domain/batch-status';
import { CURSOR_WORD, oneOf, type FilterWords } from './filter-words';

/** The retry keys page's URL state: filters and the cursors of its two lists. */
export const retryKeysSearch = {
  job: parseAsString,
  phase: parseAsStringLiteral(FAULT_PHASES),
  category: parseAsStringLiteral(FAILURE_CATEGORIES),
  /** One execution's steps only: the execution page links here. */
  execution: parseAsInteger,
  cursor: parseAsString,
  corruptCursor: parseAsString,
  /** Which list is shown: the unresolved keys (default) or the corrupt envelopes, a tab each. */
  show: parseAsStringLiteral(['keys', 'corrupt'] as const),
};
export type RetryKeysSearch = inferParserType<typeof retryKeysSearch>;

export const loadRetryKeysSearch = createLoader(retryKeysSearch);
export const serializeRetryKeysSearch = createSerializer(retryKeysSearch);
export const retryKeysHref = (search: Partial<RetryKeysSearch>) => serializeRetryKeysSearch('/retry-keys', search);

/**
 * GET /api/retry-keys params of the page's two lists; they are also the lists' query-key
 * filters. No `limit`: both lists page by the server's page size, as every list does.
 */
export const unresolvedKeysParams = (s: RetryKeysSearch) =>
  ({
    only: 'keys',
    job: s.job ?? undefined,
    phase: s.phase ?? undefined,
    category: s.category ?? undefined,
    executionId: s.execution ?? undefined,
    cursor: s.cursor ?? undefined,
  }) as const;
export const corruptEnvelopesParams = (s: RetryKeysSearch) =>
  ({
    only: 'corrupt',
    job: s.job ?? undefined,
    executionId: s.execution ?? undefined,
    cursor: s.corruptCursor ?? undefined,
  }) as const;

/** The retry-key filters in the page's words, for its invalid-filter state. */
export const RETRY_KEY_FILTER_WORDS: FilterWords = {
  job: { label: 'Job', expect: 'a job name of at most 128 characters' },
  phase: { label: 'Phase', expect: oneOf(FAULT_PHASES) },
  category: { label: 'Category', expect: oneOf(FAILURE_CATEGORIES) },
  execution: { label: 'Execution', expect: 'an execution id, a whole number' },
  cursor: CURSOR_WORD,
  corruptCursor: CURSOR_WORD,
};
