'use server';

import { toDeadLetterFilter } from '@/lib/queries/settlements-types';
import { action } from '@/lib/server/action';
import { settlementTransactions } from '@/lib/server/composition-root';
import { cancelBulkReplay, previewBulkReplay, startBulkReplay } from '@/lib/services/bulk-replay';
import { discardDeadLetter, replayDeadLetter, requeueSettlement } from '@/lib/services/dead-letter-actions';
import { previewBulkRequeue } from '@/lib/services/bulk-requeue';
import {
  bulkCancelSchema,
  bulkJobSchema,
  bulkPreviewSchema,
  bulkRequeuePreviewSchema,
  deadLetterActionSchema,
  requeueSchema,
} from './settlement-schemas';

/**
 * Settlement mutations (docs/design.md#dead-letter-replay, #bulk-replay, #discard-and-requeue). Each is one service call; the
 * services are idempotent by operation id (replay, discard, requeue) or by job
 * (start, cancel), so a double click or a resubmitted dialog acts once.
 */

/** Replays one dead letter: it leaves settle.dead_letters and is queued again, attempts 0. */
export const replayDeadLetterAction = action(deadLetterActionSchema, 'settlement.replay', async (actor, input) => {
  const result = await replayDeadLetter(settlementTransactions(), actor, input);
  if (!result.ok) return result;
  const r = result.value;
  return {
    ok: true,
    value: {
      receiptId: r.receiptId,
      operationId: r.operationId,
      priorAttempts: r.priorAttempts,
      priorReason: r.priorReason,
      at: r.at.toISOString(),
    },
  };
});

/** Deletes one dead letter for good; its JSON is kept in the audit event. */
export const discardDeadLetterAction = action(deadLetterActionSchema, 'settlement.discard', async (actor, input) => {
  const result = await discardDeadLetter(settlementTransactions(), actor, input);
  return result.ok ? { ok: true, value: { receiptId: result.value.receiptId, reason: result.value.reason } } : result;
});

/** Makes a retry-scheduled settlement due now, guarded by the row version shown. */
export const requeueSettlementAction = action(requeueSchema, 'settlement.requeue', async (actor, input) => {
  const result = await requeueSettlement(settlementTransactions(), actor, input);
  return result.ok ? { ok: true, value: result.value } : result;
});

/** Freezes the dead letters of a filter into a PREVIEWED job: the exact count and a sample. */
export const previewBulkReplayAction = action(
  bulkPreviewSchema,
  'settlement.bulk_replay.preview',
  async (actor, input) => {
    const filter = input.receiptIds ? { receiptIds: input.receiptIds } : toDeadLetterFilter(input.filters);
    const result = await previewBulkReplay(settlementTransactions(), actor, {
      filter,
      note: input.note,
      action: input.action,
    });
    return result.ok ? { ok: true, value: result.value } : result;
  },
);

/**
 * Freezes the ticked settlements that are still retry-scheduled into a PREVIEWED REQUEUE
 * job; started and cancelled like a bulk replay, under the same permission as one requeue.
 */
export const previewBulkRequeueAction = action(
  bulkRequeuePreviewSchema,
  'settlement.bulk_replay.preview',
  async (actor, input) => {
    const result = await previewBulkRequeue(settlementTransactions(), actor, input);
    return result.ok ? { ok: true, value: result.value } : result;
  },
);

/** Hands a previewed job to the worker; starting a running or finished job changes nothing. */
export const startBulkReplayAction = action(bulkJobSchema, 'settlement.bulk_replay.start', async (actor, input) => {
  const result = await startBulkReplay(settlementTransactions(), actor, input);
  return result.ok
    ? {
        ok: true,
        value: { jobId: result.value.id, status: result.value.status as string, itemCount: result.value.itemCount },
      }
    : result;
});

/** Stops a job between batches; items not yet processed end as `cancelled`. */
export const cancelBulkReplayAction = action(
  bulkCancelSchema,
  'settlement.bulk_replay.cancel',
  async (actor, input) => {
    const result = await cancelBulkReplay(settlementTransactions(), actor, input);
    return result.ok
      ? {
          ok: true,
          value: {
            jobId: result.value.job.id,
            cancelled: result.value.counts.cancelled,
            processed: result.value.job.processedCount,
          },
        }
      : result;
  },
);
