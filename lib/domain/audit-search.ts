/**
 * The audit view's filter words and outcomes, without zod: the browser needs these,
 * not the schemas (lib/domain/audit-filters.ts validates them on the server).
 */
export const AUDIT_OUTCOMES = ['APPLIED', 'REFUSED'] as const;
export type AuditOutcomeFilter = (typeof AUDIT_OUTCOMES)[number];

export const AUDIT_FILTER_KEYS = ['actor', 'action', 'targetKind', 'targetId', 'outcome', 'from', 'to'] as const;

export type AuditSearchKey = (typeof AUDIT_FILTER_KEYS)[number] | 'cursor';
export type AuditSearch = Partial<Record<AuditSearchKey, string>>;

/**
 * The non-empty filters (and cursor) in a fixed order: the query key, the read API
 * URL and the export URL are all made from this, so they cannot drift apart.
 */
export function auditSearch(
  state: Partial<Record<AuditSearchKey, string | null | undefined>>,
  withCursor = true,
): AuditSearch {
  const search: AuditSearch = {};
  for (const key of [...AUDIT_FILTER_KEYS, ...(withCursor ? (['cursor'] as const) : [])]) {
    const value = state[key]?.trim();
    if (value) search[key] = value;
  }
  return search;
}
