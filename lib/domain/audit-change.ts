/**
 * What an audited change changed: each field the event's `before` recorded whose
 * value in `after` differs (a role change: role operator → approver). Fields only in
 * `after` are results, not changes (a proposal id, a count), so they are left out;
 * an event without a `before` object changed nothing that it recorded.
 */
export interface AuditFieldChange {
  field: string;
  before: string;
  after: string;
}

const shown = (value: unknown): string =>
  value === undefined ? '(none)' : typeof value === 'string' ? value : JSON.stringify(value);

export function auditChanges(before: unknown, after: unknown): AuditFieldChange[] {
  if (!isRecord(before)) return [];
  const next = isRecord(after) ? after : {};
  return Object.keys(before)
    .filter((field) => JSON.stringify(before[field]) !== JSON.stringify(next[field]) && field in next)
    .map((field) => ({ field, before: shown(before[field]), after: shown(next[field]) }));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One line per change, as the page and the CSV export show it: "role: operator → approver; disabled: false → true". */
export const formatAuditChanges = (changes: AuditFieldChange[]): string =>
  changes.map((c) => `${c.field}: ${c.before} → ${c.after}`).join('; ');
