import { createLoader, parseAsString, parseAsStringLiteral, type inferParserType } from 'nuqs/server';
import { PROPOSAL_STATUSES } from '../domain/proposal-status';
import { CURSOR_WORD, oneOf, type FilterWords } from './filter-words';
import { withSearch } from './search-string';

/** The recovery page's URL state (proposalFiltersSchema validates the same params). */
export const recoverySearch = {
  status: parseAsStringLiteral(PROPOSAL_STATUSES),
  cursor: parseAsString,
};
export type RecoverySearch = inferParserType<typeof recoverySearch>;

export const loadRecoverySearch = createLoader(recoverySearch);
export const recoveryHref = (search: Partial<RecoverySearch>) => withSearch('/recovery', search);

/** The proposal filters in the page's words, for its invalid-filter state. */
export const PROPOSAL_FILTER_WORDS: FilterWords = {
  status: { label: 'Status', expect: oneOf(PROPOSAL_STATUSES) },
  cursor: CURSOR_WORD,
};
