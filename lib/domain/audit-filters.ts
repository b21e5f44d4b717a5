import { z } from 'zod';
import { AUDIT_OUTCOMES } from './audit-search';
import { cursorText, filterText } from './text';

export {
  AUDIT_FILTER_KEYS,
  AUDIT_OUTCOMES,
  auditSearch,
  type AuditOutcomeFilter,
  type AuditSearch,
  type AuditSearchKey,
} from './audit-search';

const term = (label: string) => filterText(200, { tooLong: `${label} is at most 200 characters.` });
/** An instant with its offset (the URL carries UTC, `2026-01-31T09:00:00.000Z`); empty means unbounded. */
const instant = z
  .union([z.literal(''), z.iso.datetime({ offset: true, message: 'A date and time such as 2026-01-31T09:00:00Z.' })])
  .transform((v) => (v === '' ? undefined : v))
  .optional();

/**
 * The audit view's filters, one schema for the page, the read API and the CSV
 * export, so a link, a script and a download all select the same rows. Empty
 * strings mean "any" (what an emptied form field sends).
 */
export const auditFiltersSchema = z
  .object({
    actor: term('Actor'),
    action: term('Action'),
    targetKind: term('Target kind'),
    targetId: term('Target id'),
    outcome: z
      .union([z.literal(''), z.enum(AUDIT_OUTCOMES)])
      .transform((v) => (v === '' ? undefined : v))
      .optional(),
    /** Events at or after this instant. */
    from: instant,
    /** Events before this instant. */
    to: instant,
  })
  // The target index leads with the kind: an id alone would scan the whole log.
  .refine((f) => !f.targetId || f.targetKind, {
    message: 'Choose a target kind to filter by target id.',
    path: ['targetId'],
  })
  .refine((f) => !f.from || !f.to || Date.parse(f.from) < Date.parse(f.to), {
    message: 'The end of the range is not after its start.',
    path: ['to'],
  });

export type AuditFilters = z.output<typeof auditFiltersSchema>;

/** Filters plus the opaque keyset cursor of the page to show. */
export const auditListQuerySchema = z.intersection(
  auditFiltersSchema,
  z.object({ cursor: cursorText(400).optional() }),
);
