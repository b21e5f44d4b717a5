import { createLoader, createSerializer, parseAsString, parseAsStringLiteral, type inferParserType } from 'nuqs/server';
import { PROPOSAL_STATUSES } from '../domain/proposal-status';

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
export const proposalListParams = (s: RecoverySearch) => ({ status: s.status ?? undefined, cursor: s.cursor ?? undefined });
