import { createLoader, parseAsInteger, parseAsString, parseAsStringLiteral, type inferParserType } from 'nuqs/server';
import { FAILURE_CATEGORIES, FAULT_PHASES } from '../domain/batch-status';
import { CURSOR_WORD, oneOf, type FilterWords, type FilterWord } from './filter-words';
import { type SearchValue, withSearch } from './search-string';

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
export const retryKeysHref = (search: Partial<RetryKeysSearch>) => withSearch('/retry-keys', search);

/** The page's params as typed state (the view, the loader) or as the text the browser sent (the page's check). */
type RetryKeysParams = { [K in keyof RetryKeysSearch]?: SearchValue };

/**
 * GET /api/retry-keys params of the page's two lists, from which their query keys are made too.
 * No `limit`: both lists page by the server's page size, as every list does.
 */
export const unresolvedKeysParams = (s: RetryKeysParams) =>
  ({
    only: 'keys',
    job: s.job,
    phase: s.phase,
    category: s.category,
    executionId: s.execution,
    cursor: s.cursor,
  }) as const;
export const corruptEnvelopesParams = (s: RetryKeysParams) =>
  ({ only: 'corrupt', job: s.job, executionId: s.execution, cursor: s.corruptCursor }) as const;

const EXECUTION_WORD: FilterWord = { label: 'Execution', expect: 'an execution id, a whole number' };

/** The retry-key filters in the page's words, for its invalid-filter state. */
export const RETRY_KEY_FILTER_WORDS: FilterWords = {
  job: { label: 'Job', expect: 'a job name of at most 128 characters' },
  phase: { label: 'Phase', expect: oneOf(FAULT_PHASES) },
  category: { label: 'Category', expect: oneOf(FAILURE_CATEGORIES) },
  execution: EXECUTION_WORD,
  // The read API's name of the same filter, as a refusal of the page's check names it.
  executionId: EXECUTION_WORD,
  cursor: CURSOR_WORD,
  corruptCursor: CURSOR_WORD,
};
