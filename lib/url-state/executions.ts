import {
  createLoader,
  parseAsIsoDateTime,
  parseAsString,
  parseAsStringLiteral,
  type inferParserType,
} from 'nuqs/server';
import { BATCH_STATUSES } from '../domain/batch-status';
import { CURSOR_WORD, INSTANT_WORDS, oneOf, type FilterWords } from './filter-words';
import { withSearch } from './search-string';

/**
 * The executions list's URL state, typed once for the server page (loader), the
 * client hooks (useQueryStates) and the links (serializer). The page and the read
 * API validate the same params with executionFiltersSchema.
 */
export const executionsSearch = {
  status: parseAsStringLiteral(BATCH_STATUSES),
  job: parseAsString,
  stale: parseAsStringLiteral(['1'] as const),
  updatedFrom: parseAsIsoDateTime,
  updatedTo: parseAsIsoDateTime,
  q: parseAsString,
  cursor: parseAsString,
};
export type ExecutionsSearch = inferParserType<typeof executionsSearch>;

export const loadExecutionsSearch = createLoader(executionsSearch);
/** `/executions?…`, through the console's one URL serializer (lib/url-state/search-string.ts). */
export const executionsHref = (search: Partial<ExecutionsSearch>) => withSearch('/executions', search);

/** The executions filters in the page's words, for its invalid-filter state. */
export const EXECUTION_FILTER_WORDS: FilterWords = {
  status: { label: 'Status', expect: oneOf(BATCH_STATUSES) },
  job: { label: 'Job', expect: 'a job name of at most 128 characters' },
  stale: { label: 'Stale only', expect: '1, or left out' },
  updatedFrom: { label: 'Updated from', expect: INSTANT_WORDS },
  updatedTo: { label: 'Updated before', expect: INSTANT_WORDS },
  q: { label: 'Search', expect: 'an execution id or a job instance id (digits only)' },
  cursor: CURSOR_WORD,
};
