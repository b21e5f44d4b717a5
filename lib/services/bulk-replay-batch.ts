import 'server-only';
import { BULK_REPLAY_BATCH_SIZE, classifyBulkReplayItem, type BulkReplayItemResult } from '../domain/settlement';
import type { BulkReplayStore, BulkWorkerLease } from '../ports/bulk-replay';
import type { SettlementReplayPorts } from '../ports/settlement-replay';
import type { UnitOfWork } from '../ports/unit-of-work';
import { DISCARD_ACTION, REPLAY_ACTION, deadLetterSummary } from './dead-letter-actions';
import { requeueBatchItems } from './bulk-requeue-batch';
import { bulkReplayOperationId } from './settlement-operation-id';

export interface BulkReplayBatchReport {
  jobId: number;
  /** Items this batch gave a result. */
  processed: number;
  replayed: number;
  discarded: number;
  requeued: number;
  /** The job has no unprocessed items left and is COMPLETED. */
  finished: boolean;
  /** The instance whose lease on the job ran out, when this batch took the job over from it. */
  takenOverFrom: string | null;
}

/**
 * Runs one batch of the oldest RUNNING job no other instance holds, in one transaction,
 * and renews `worker`'s lease on it:
 * each frozen item is replayed, or classified as already replayed, no longer
 * dead-lettered, or changed since the preview (DESIGN.md 5.2); a REQUEUE job's items go
 * to requeueBatchItems. Item results commit with
 * the replays, so a worker killed mid-batch leaves that batch wholly undone, and the
 * next run redoes it; the replay's unique operation id guards the rest. Null when no
 * job needs a worker.
 */
export function processBulkReplayBatch(
  transactions: UnitOfWork<SettlementReplayPorts>,
  worker: BulkWorkerLease,
  batchSize: number = BULK_REPLAY_BATCH_SIZE,
): Promise<BulkReplayBatchReport | null> {
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > BULK_REPLAY_BATCH_SIZE) {
    throw new RangeError(`bulk replay batch size must be 1..${BULK_REPLAY_BATCH_SIZE}`);
  }
  return transactions.transaction(async ({ replays, bulk, audit }) => {
    const job = await bulk.lockNextRunningJob(worker);
    if (!job) return null;
    const actor = job.startedBy;
    if (!actor) throw new Error(`bulk replay ${job.id} is running without a starter`);
    const items = await bulk.pendingItems(job.id, batchSize);
    if (job.action === 'REQUEUE') {
      const requeueResults = await requeueBatchItems({ replays, audit }, job, actor, items);
      return finishBatch(bulk, job, worker, requeueResults, { replayed: 0, discarded: 0 });
    }
    const operationIds = new Map(items.map((item) => [item.receiptId, bulkReplayOperationId(job.id, item.receiptId)]));
    const discarding = job.action === 'DISCARD';
    // A discard leaves no replay row: a batch redone after a crash finds its dead letters gone (its results
    // commit with the deletes, so a committed batch is never redone).
    const replayedBefore = discarding ? new Set<string>() : new Set((await replays.findReplays([...operationIds.values()])).map((r) => r.operationId));
    const open = items.filter((item) => !replayedBefore.has(operationIds.get(item.receiptId)!));
    const deadLetters = new Map((await replays.lockDeadLetters(open.map((item) => item.receiptId))).map((d) => [d.receiptId, d]));

    const results: { receiptId: string; result: BulkReplayItemResult }[] = items.map((item) => {
      const deadLetter = deadLetters.get(item.receiptId);
      const result = classifyBulkReplayItem({
        alreadyReplayed: replayedBefore.has(operationIds.get(item.receiptId)!),
        deadLetter: deadLetter ? { recordedAtMs: deadLetter.recordedAtMs } : null,
        previewRecordedAtMs: item.recordedAtMs,
      });
      return { receiptId: item.receiptId, result: discarding && result === 'replayed' ? ('discarded' as const) : result };
    });
    const toReplay = results
      .filter((r) => r.result === 'replayed')
      .map((r) => ({ deadLetter: deadLetters.get(r.receiptId)!, operationId: operationIds.get(r.receiptId)! }));

    const nowMs = await replays.serverNowMs();
    for (const r of results.filter((x) => x.result === 'discarded')) {
      const deadLetter = deadLetters.get(r.receiptId)!;
      await replays.discard(deadLetter, nowMs);
      // As a single discard is audited: the dead letter's JSON lives on in the event.
      await audit.record({
        actor,
        action: DISCARD_ACTION,
        target: { kind: 'settlement', id: deadLetter.receiptId },
        reason: job.note,
        operationId: operationIds.get(r.receiptId)!,
        requestId: `bulk-replay-job-${job.id}`,
        before: deadLetterSummary(deadLetter),
        after: { discardedAtMs: nowMs, bulkJob: job.id },
        outcome: 'APPLIED',
      });
    }
    await replays.replay(toReplay, { actor, note: job.note, nowMs, bulkJob: job.id });
    // Every replay lands in the audit log on its own, as a single replay would.
    for (const { deadLetter, operationId } of toReplay) {
      await audit.record({
        actor,
        action: REPLAY_ACTION,
        target: { kind: 'settlement', id: deadLetter.receiptId },
        reason: job.note,
        operationId,
        // The worker's work has no request: the job names it.
        requestId: `bulk-replay-job-${job.id}`,
        before: deadLetterSummary(deadLetter),
        after: { queued: 'pending_observation', attempts: 0, visibleAtMs: nowMs, bulkJob: job.id },
        outcome: 'APPLIED',
      });
    }
    return finishBatch(bulk, job, worker, results, { replayed: toReplay.length, discarded: results.filter((r) => r.result === 'discarded').length });
  });
}

/** Records a batch's results, and completes the job when none is left, else renews the worker's lease on it from now. */
async function finishBatch(
  bulk: BulkReplayStore,
  job: { id: number; previousInstance: string | null },
  worker: BulkWorkerLease,
  results: { receiptId: string; result: BulkReplayItemResult }[],
  done: { replayed: number; discarded: number },
): Promise<BulkReplayBatchReport> {
  await bulk.recordResults(job.id, results);
  const finished = !(await bulk.hasPendingItems(job.id));
  if (finished) await bulk.markCompleted(job.id);
  else await bulk.renewLease(job.id, worker);
  const requeued = results.filter((r) => r.result === 'requeued').length;
  return { jobId: job.id, processed: results.length, ...done, requeued, finished, takenOverFrom: job.previousInstance };
}
