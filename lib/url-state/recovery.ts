import { createLoader, createSerializer, parseAsString, parseAsStringLiteral, type inferParserType } from 'nuqs/server';
import { PROPOSAL_STATUSES } from '../domain/proposal-status';
import { CURSOR_WORD, oneOf, type FilterWords } from './filter-words';

/** The recovery page's URL state (proposalFiltersSchema validates the same params). */
export const recoverySearch = {
  status: parseAsStringLiteral(PROPOSAL_STATUSES),
  cursor: parseAsString,
};
export type RecoverySearch = inferParserType<typeof recoverySearch>;

export const loadRecoverySearch = createLoader(recoverySearch);
export const serializeRecoverySearch = createSerializer(recoverySearch);
export const recoveryHref = (search: Partial<RecoverySearch>) => serializeRecoverySearch('/recovery', search);

/** GET /api/proposals params for a URL state, and the list's query-key filters. */
export const proposalListParams = (s: RecoverySearch) => ({
  status: s.status ?? undefined,
  cursor: s.cursor ?? undefined,
});

/** The proposal filters in the page's words, for its invalid-filter state. */
export const PROPOSAL_FILTER_WORDS: FilterWords = {
  status: { label: 'Status', expect: oneOf(PROPOSAL_STATUSES) },
  cursor: CURSOR_WORD,
};
