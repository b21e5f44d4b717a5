import {
  createLoader,
  parseAsIsoDateTime,
  parseAsString,
  parseAsStringLiteral,
  type inferParserType,
} from 'nuqs/server';
import { AUDIT_OUTCOMES, auditSearch, type AuditSearch } from '../domain/audit-search';
import { CURSOR_WORD, INSTANT_WORDS, oneOf, type FilterWords } from './filter-words';
import { withSearch } from './search-string';

/**
 * The audit log's URL state for the server page, the view and the export link;
 * auditListQuerySchema validates the same params on the page, the API and the export.
 */
export const auditUrlSearch = {
  actor: parseAsString,
  action: parseAsString,
  targetKind: parseAsString,
  targetId: parseAsString,
  outcome: parseAsStringLiteral(AUDIT_OUTCOMES),
  from: parseAsIsoDateTime,
  to: parseAsIsoDateTime,
  cursor: parseAsString,
};
export type AuditUrlState = inferParserType<typeof auditUrlSearch>;
export const loadAuditSearch = createLoader(auditUrlSearch);
/** The audit log narrowed to one target (its kind as the audit records it: `batch_execution`, `settlement`, ...). */
export const auditTargetFilterHref = (targetKind: string, targetId: string) =>
  withSearch('/audit', { targetKind, targetId });

const iso = (at: Date | null) => (at && !Number.isNaN(at.getTime()) ? at.toISOString() : null);

/** The URL state as the read API's params (query key, API URL and export URL alike). */
export function auditSearchOf(state: AuditUrlState, withCursor = true): AuditSearch {
  return auditSearch({ ...state, from: iso(state.from), to: iso(state.to) }, withCursor);
}

/** Filters from the form (ISO text) as URL state. */
export function auditStateOf(search: AuditSearch): Omit<AuditUrlState, 'cursor'> {
  const at = (value: string | undefined) => (value ? new Date(value) : null);
  return {
    actor: search.actor ?? null,
    action: search.action ?? null,
    targetKind: search.targetKind ?? null,
    targetId: search.targetId ?? null,
    outcome: AUDIT_OUTCOMES.find((o) => o === search.outcome) ?? null,
    from: at(search.from),
    to: at(search.to),
  };
}

/** The audit filters in the page's words, for the form's field errors. */
export const AUDIT_FILTER_WORDS: FilterWords = {
  actor: { label: 'Actor', expect: 'a username of at most 200 characters' },
  action: { label: 'Action', expect: 'an action name of at most 200 characters, such as settlement.replay' },
  targetKind: { label: 'Target kind', expect: 'a kind of at most 200 characters, such as settlement' },
  targetId: { label: 'Target id', expect: 'an id of at most 200 characters' },
  outcome: { label: 'Outcome', expect: oneOf(AUDIT_OUTCOMES) },
  from: { label: 'From', expect: INSTANT_WORDS },
  to: { label: 'To', expect: INSTANT_WORDS },
  cursor: CURSOR_WORD,
};
