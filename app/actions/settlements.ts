'use server';

import { selectionFilter } from '@/lib/domain/dead-letter-filter';
import { mapOk } from '@/lib/domain/result';
import { toDeadLetterFilter } from '@/lib/queries/settlements-types';
import { action } from '@/lib/server/action';
import { settlementDeps } from '@/lib/server/composition-root';
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
 * Settlement mutations (docs/design.md#dead-letter-replay, #bulk-replay, #discard-and-requeue). Each is one
 * service call; the services are idempotent by operation id (replay, discard, requeue) or by job (start,
 * cancel), so a double click or a resubmitted dialog acts once.
 */

/** Replays one dead letter: it leaves settle.dead_letters and is queued again, attempts 0. */
export const replayDeadLetterAction = action(deadLetterActionSchema, 'settlement.replay', async (actor, input) =>
  mapOk(await replayDeadLetter(settlementDeps(), actor, input), (r) => ({
    receiptId: r.receiptId,
    operationId: r.operationId,
    priorAttempts: r.priorAttempts,
    priorReason: r.priorReason,
    at: r.at.toISOString(),
  })),
);

/** Deletes one dead letter for good; its JSON is kept in the audit event. */
export const discardDeadLetterAction = action(deadLetterActionSchema, 'settlement.discard', async (actor, input) =>
  mapOk(await discardDeadLetter(settlementDeps(), actor, input), (d) => ({ receiptId: d.receiptId, reason: d.reason })),
);

/** Makes a retry-scheduled settlement due now, guarded by the row version shown. */
export const requeueSettlementAction = action(requeueSchema, 'settlement.requeue', async (actor, input) =>
  requeueSettlement(settlementDeps(), actor, input),
);

/** Freezes the dead letters of a filter into a PREVIEWED job: the exact count and a sample. */
export const previewBulkReplayAction = action(
  bulkPreviewSchema,
  'settlement.bulk_replay.preview',
  async (actor, input) => {
    // The schema checked both forms: the filter of the URL's words, and the selection's ids.
    const filter = input.receiptIds ? selectionFilter(input.receiptIds) : toDeadLetterFilter(input.filters);
    return previewBulkReplay(settlementDeps(), actor, { filter, note: input.note, action: input.action });
  },
);

/**
 * Freezes the ticked settlements that are still retry-scheduled into a PREVIEWED REQUEUE
 * job; started and cancelled like a bulk replay, under the same permission as one requeue.
 */
export const previewBulkRequeueAction = action(
  bulkRequeuePreviewSchema,
  'settlement.bulk_replay.preview',
  async (actor, input) => previewBulkRequeue(settlementDeps(), actor, input),
);

/** Hands a previewed job to the worker; starting a running or finished job changes nothing. */
export const startBulkReplayAction = action(bulkJobSchema, 'settlement.bulk_replay.start', async (actor, input) =>
  mapOk(await startBulkReplay(settlementDeps(), actor, input), (job) => ({
    jobId: job.id,
    status: job.status as string,
    itemCount: job.itemCount,
  })),
);

/** Stops a job between batches; items not yet processed end as `cancelled`. */
export const cancelBulkReplayAction = action(bulkCancelSchema, 'settlement.bulk_replay.cancel', async (actor, input) =>
  mapOk(await cancelBulkReplay(settlementDeps(), actor, input), ({ job, counts }) => ({
    jobId: job.id,
    cancelled: counts.cancelled,
    processed: job.processedCount,
  })),
);
