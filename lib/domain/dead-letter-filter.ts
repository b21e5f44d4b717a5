import { z } from 'zod';
import { MAX_SELECTED_RECEIPTS, RECEIPT_PREFIX_MAX_LENGTH, type DeadLetterFilter } from './dead-letter-filter-words';
import { FAILURE_CODES, MAX_U32 } from './settlement-vocabulary';
import { singleLineText } from './text';

export * from './dead-letter-filter-words';

const RECEIPT_ID_MAX_LENGTH = 1_000;

const whole = (max: number, message: string) =>
  z.number({ error: message }).int(message).min(0, message).max(max, message);

/**
 * Each field's bounds, once: the filter schema below uses them as they are, the URL
 * schemas (lib/queries/settlements-types.ts) after coercing the URL's text.
 */
export const deadLetterFilterFields = {
  reason: z.enum(FAILURE_CODES, { error: (issue) => `Unknown reason code ${String(issue.input)}.` }),
  ageMs: whole(Number.MAX_SAFE_INTEGER, 'An age is a whole number of milliseconds.'),
  attempts: whole(MAX_U32, 'Attempts are a whole number.'),
  // Matched literally and kept as given (no trimming): a receipt id is the runtime's free text.
  receiptIdPrefix: singleLineText(RECEIPT_PREFIX_MAX_LENGTH, {
    trim: false,
    tooLong: `At most ${RECEIPT_PREFIX_MAX_LENGTH} characters.`,
  }),
};

/** A selection's receipt ids as a filter keeps them: each once, sorted. */
const distinctReceipts = (ids: readonly string[]): string[] => [...new Set(ids)].sort();

/** The filter of exactly the ticked receipts, as the filter schema below would make it of valid ids. */
export const selectionFilter = (receiptIds: readonly string[]): DeadLetterFilter => ({
  receiptIds: distinctReceipts(receiptIds),
});

/** The one validator of a filter: field bounds, then the min/max pairs. Unknown keys are dropped. */
export const deadLetterFilterSchema = z
  .object({
    reason: deadLetterFilterFields.reason.optional(),
    minAgeMs: deadLetterFilterFields.ageMs.optional(),
    maxAgeMs: deadLetterFilterFields.ageMs.optional(),
    minAttempts: deadLetterFilterFields.attempts.optional(),
    maxAttempts: deadLetterFilterFields.attempts.optional(),
    // An empty prefix selects everything, so it is the same as none.
    receiptIdPrefix: deadLetterFilterFields.receiptIdPrefix
      .optional()
      .transform((prefix) => (prefix === '' ? undefined : prefix)),
    receiptIds: z
      .array(singleLineText(RECEIPT_ID_MAX_LENGTH, { min: 1, trim: false }), {
        error: 'A selection is a list of receipt ids.',
      })
      .min(1, `Select 1 to ${MAX_SELECTED_RECEIPTS.toLocaleString('en-US')} dead letters.`)
      .max(MAX_SELECTED_RECEIPTS, `Select 1 to ${MAX_SELECTED_RECEIPTS.toLocaleString('en-US')} dead letters.`)
      .transform(distinctReceipts)
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
