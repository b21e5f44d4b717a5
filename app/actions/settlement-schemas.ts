import { z } from 'zod';
import { operationIdSchema, wholeNumberSchema } from '@/lib/domain/identifier-patterns';
import { multiLineText, singleLineText } from '@/lib/domain/text';
import { deadLetterFiltersSchema } from '@/lib/queries/settlements-types';

/** Zod schemas shared by the settlement dialogs and their server actions. */

// Receipt ids are the runtime's free text: kept exactly as given, never trimmed.
const receiptId = singleLineText(1_000, { min: 1, trim: false, required: 'A receipt id is required.' });
// The dialog's idempotency key, made when it opens (docs/design.md#identifiers).
const operationId = operationIdSchema();
const requiredNote = multiLineText(2_000, { min: 1, required: 'Say why: a note is required.' });
const optionalNote = multiLineText(2_000).optional();
const jobId = wholeNumberSchema(1);

/** Replay or discard one dead letter. */
export const deadLetterActionSchema = z.object({ receiptId, note: requiredNote, operationId });
export type DeadLetterActionInput = z.input<typeof deadLetterActionSchema>;

/** Make a retry-scheduled settlement due now, if it still has the row version the person saw. */
export const requeueSchema = z.object({
  receiptId,
  expectedRowVersion: wholeNumberSchema(0),
  operationId,
  note: optionalNote,
});

/**
 * Freeze the dead letters of the current filter (the URL's fields) into a previewed job,
 * or, with `receiptIds`, exactly the rows ticked on the page (the filter is then only
 * where they were picked from).
 */
export const bulkPreviewSchema = z.object({
  filters: deadLetterFiltersSchema,
  receiptIds: z.array(receiptId).min(1).max(1_000, 'Select at most 1,000 dead letters.').optional(),
  /** REPLAY (the default) queues each frozen dead letter again; DISCARD deletes each. */
  action: z.enum(['REPLAY', 'DISCARD']).optional(),
  note: requiredNote,
});

/** Freeze those of the ticked settlements that are still retry-scheduled into a REQUEUE job. */
export const bulkRequeuePreviewSchema = z.object({
  receiptIds: z
    .array(receiptId)
    .min(1, 'Select at least one settlement.')
    .max(1_000, 'Select at most 1,000 settlements.'),
  note: requiredNote,
});
export type BulkRequeuePreviewInput = z.input<typeof bulkRequeuePreviewSchema>;

export const bulkJobSchema = z.object({ jobId });
export const bulkCancelSchema = z.object({ jobId, note: optionalNote });
