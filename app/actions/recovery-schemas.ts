import { z } from 'zod';
import { FAILURE_CATEGORIES, RECOVERY_RESULT_STATUSES } from '@/lib/domain/batch-status';
import {
  actorRefSchema,
  operationIdSchema,
  reasonCodeSchema,
  wholeNumberSchema,
} from '@/lib/domain/identifier-patterns';
import { multiLineText, singleLineText } from '@/lib/domain/text';
import { STOP_OPERATION_ID_MAX } from '@/lib/domain/operator-request';

/** Zod schemas shared by the recovery forms and their server actions. */
const id = wholeNumberSchema(1);

export const proposalIdSchema = z.object({ proposalId: id });

/** Why the takeover is asked for: required, shown to the approver on the proposal. */
const requestReason = multiLineText(500, {
  min: 1,
  required: 'Say why the takeover is needed: the approver reads it before deciding.',
});

export const proposeTakeoverSchema = z.discriminatedUnion('target', [
  z.object({ target: z.literal('batch'), executionId: id, reason: requestReason }),
  z.object({
    target: z.literal('orchestration'),
    executionId: singleLineText(256, { min: 1 }),
    successorOwner: actorRefSchema,
    reason: requestReason,
  }),
]);

export const confirmTakeoverSchema = z.object({
  proposalId: id,
  evidenceDigest: z.string().regex(/^[0-9a-f]{64}$/),
  expectedVersion: wholeNumberSchema(0).optional(),
  expectedFencingToken: wholeNumberSchema(1).optional(),
  resultingStatus: z.enum(RECOVERY_RESULT_STATUSES).optional(),
  failureCategory: z.enum(FAILURE_CATEGORIES).optional(),
  reasonCode: reasonCodeSchema.optional(),
  // A ticked checkbox posts 'on'; JSON callers send true.
  acknowledged: z.preprocess((v) => v === true || v === 'on' || v === 'true', z.boolean()).optional(),
  reason: multiLineText(500).optional(),
});

export const rejectProposalSchema = proposalIdSchema.extend({
  reason: multiLineText(500, { min: 1, required: 'Say why.' }),
});
export const cancelProposalSchema = proposalIdSchema.extend({ reason: multiLineText(500).optional() });

export const requestStopSchema = z.object({ executionId: id, operationId: operationIdSchema(STOP_OPERATION_ID_MAX) });

export const proposeAbandonSchema = z.object({ executionId: id, note: multiLineText(500).optional() });
