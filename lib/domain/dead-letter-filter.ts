import { z } from 'zod';
import { FAILURE_CODES, MAX_U32, type FailureCode } from './settlement-vocabulary';
import { singleLineText } from './text';

/**
 * Which dead letters a view or a bulk replay takes (DESIGN.md 5.2); every field narrows
 * the set. The dead-letter list, its groups, the queue view (on its own columns) and
 * the bulk replay preview all read this one type, so a preview freezes exactly the rows
 * the list shows for the same fields.
 */
export interface DeadLetterFilter {
  reason?: FailureCode;
  /** Recorded at least this long before the time the filter is applied at. */
  minAgeMs?: number;
  /** Recorded at most this long before the time the filter is applied at. */
  maxAgeMs?: number;
  minAttempts?: number;
  maxAttempts?: number;
  /** Matched literally: `%` and `_` mean themselves. */
  receiptIdPrefix?: string;
  /** Exactly these receipts (a selection on the dead letters page), still dead-lettered when applied. */
  receiptIds?: string[];
}

/** A filter as it arrives at a service boundary, before the validator below has seen it. */
export type UncheckedDeadLetterFilter = { [K in keyof DeadLetterFilter]?: unknown };

export const RECEIPT_PREFIX_MAX_LENGTH = 256;
/** A selection is what a person ticked on the dead letters page: bounded well below the preview's cap. */
export const MAX_SELECTED_RECEIPTS = 1_000;
const RECEIPT_ID_MAX_LENGTH = 1_000;

const AGE_PATTERN = /^(\d{1,6})(s|m|h|d)$/;
const AGE_UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
export const AGE_FORMAT_MESSAGE = 'An age such as 45s, 30m, 6h or 2d.';

export const isAgeText = (age: string): boolean => AGE_PATTERN.test(age);

/** `30m`, `6h`, `2d`: an age as the URL and the forms write it, in milliseconds. */
export function ageToMs(age: string | undefined): number | undefined {
  const match = age ? AGE_PATTERN.exec(age) : null;
  return match ? Number(match[1]) * AGE_UNIT_MS[match[2] as keyof typeof AGE_UNIT_MS] : undefined;
}

const whole = (max: number, message: string) => z.number({ error: message }).int(message).min(0, message).max(max, message);

/**
 * Each field's bounds, once: the filter schema below uses them as they are, the URL
 * schemas (lib/queries/settlements-types.ts) after coercing the URL's text.
 */
export const deadLetterFilterFields = {
  reason: z.enum(FAILURE_CODES, { error: (issue) => `Unknown reason code ${String(issue.input)}.` }),
  ageMs: whole(Number.MAX_SAFE_INTEGER, 'An age is a whole number of milliseconds.'),
  attempts: whole(MAX_U32, 'Attempts are a whole number.'),
  // Matched literally and kept as given (no trimming): a receipt id is the runtime's free text.
  receiptIdPrefix: singleLineText(RECEIPT_PREFIX_MAX_LENGTH, { trim: false, tooLong: `At most ${RECEIPT_PREFIX_MAX_LENGTH} characters.` }),
};

/** The one validator of a filter: field bounds, then the min/max pairs. Unknown keys are dropped. */
export const deadLetterFilterSchema = z
  .object({
    reason: deadLetterFilterFields.reason.optional(),
    minAgeMs: deadLetterFilterFields.ageMs.optional(),
    maxAgeMs: deadLetterFilterFields.ageMs.optional(),
    minAttempts: deadLetterFilterFields.attempts.optional(),
    maxAttempts: deadLetterFilterFields.attempts.optional(),
    // An empty prefix selects everything, so it is the same as none.
    receiptIdPrefix: deadLetterFilterFields.receiptIdPrefix.optional().transform((prefix) => (prefix === '' ? undefined : prefix)),
    receiptIds: z
      .array(singleLineText(RECEIPT_ID_MAX_LENGTH, { min: 1, trim: false }), { error: 'A selection is a list of receipt ids.' })
      .min(1, `Select 1 to ${MAX_SELECTED_RECEIPTS.toLocaleString('en-US')} dead letters.`)
      .max(MAX_SELECTED_RECEIPTS, `Select 1 to ${MAX_SELECTED_RECEIPTS.toLocaleString('en-US')} dead letters.`)
      .transform((ids) => [...new Set(ids)].sort())
      .optional(),
  })
  .superRefine((f, ctx) => {
    if (f.minAgeMs !== undefined && f.maxAgeMs !== undefined && f.minAgeMs > f.maxAgeMs) {
      ctx.addIssue({ code: 'custom', path: ['maxAgeMs'], message: 'Below the minimum age.' });
    }
    if (f.minAttempts !== undefined && f.maxAttempts !== undefined && f.minAttempts > f.maxAttempts) {
      ctx.addIssue({ code: 'custom', path: ['maxAttempts'], message: 'Below the minimum attempts.' });
    }
  })
  .transform((f): DeadLetterFilter => Object.fromEntries(Object.entries(f).filter(([, value]) => value !== undefined)));

/** The URL's and the forms' words for the filter fields (`q` is the receipt prefix, ages as text). */
export interface DeadLetterFilterWords {
  q?: string;
  reason?: FailureCode;
  minAttempts?: number;
  maxAttempts?: number;
  minAge?: string;
  maxAge?: string;
}

/** Which URL word each filter field is written as, so a filter problem lands on its form field. */
export const FILTER_FIELD_WORD: Record<keyof DeadLetterFilter, keyof DeadLetterFilterWords> = {
  reason: 'reason',
  receiptIdPrefix: 'q',
  minAttempts: 'minAttempts',
  maxAttempts: 'maxAttempts',
  minAgeMs: 'minAge',
  maxAgeMs: 'maxAge',
  // A selection is never written in the URL; a problem with it is shown beside the filter.
  receiptIds: 'q',
};

/** The filter the URL's words say: a bulk replay freezes exactly what the list shows for them. */
export function toDeadLetterFilter(words: DeadLetterFilterWords): DeadLetterFilter {
  const candidate: Record<keyof DeadLetterFilter, unknown> = {
    reason: words.reason || undefined,
    receiptIdPrefix: words.q || undefined,
    minAttempts: words.minAttempts,
    maxAttempts: words.maxAttempts,
    minAgeMs: ageToMs(words.minAge),
    maxAgeMs: ageToMs(words.maxAge),
    receiptIds: undefined, // a selection is never in the URL
  };
  return Object.fromEntries(Object.entries(candidate).filter(([, value]) => value !== undefined)) as DeadLetterFilter;
}
