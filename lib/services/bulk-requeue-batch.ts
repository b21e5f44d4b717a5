import 'server-only';
import { bulkRequeueItemResult, requeueRefusal } from '../domain/requeue-rule';
import type { BulkReplayItemResult } from '../domain/settlement-vocabulary';
import type { Actor } from '../domain/actor';
import type { BulkReplayJob } from '../ports/bulk-replay';
import type { SettlementReplayPorts } from '../ports/settlement-replay';
import { REQUEUE_ACTION, requeueAuditBefore } from './dead-letter-actions';
import { bulkReplayOperationId } from './settlement-operation-id';

/**
 * One batch of a REQUEUE job, inside the batch's transaction: each frozen settlement is
 * locked and requeued under the single requeue's rule against the row_version the preview
 * froze, so a row a worker claimed, retried or finished since is reported and left alone.
 * Attempts are never touched. Each requeue is audited as a single requeue is.
 */
export async function requeueBatchItems(
  { replays, audit }: Pick<SettlementReplayPorts, 'replays' | 'audit'>,
  job: Pick<BulkReplayJob, 'id' | 'note'>,
  actor: Pick<Actor, 'id' | 'login' | 'role'>,
  items: readonly { receiptId: string; rowVersion: number | null }[],
): Promise<{ receiptId: string; result: BulkReplayItemResult }[]> {
  const results: { receiptId: string; result: BulkReplayItemResult }[] = [];
  const nowMs = await replays.serverNowMs();
  // Receipt order (pendingItems' order) locks rows in the same order as every other batch.
  for (const item of items) {
    if (item.rowVersion === null) throw new Error(`bulk requeue ${job.id} item without a frozen row version`);
    const attempt = await replays.lockAttempt(item.receiptId);
    const refusal = requeueRefusal(attempt, item.rowVersion, nowMs);
    const moved = refusal || !attempt ? null : await replays.requeue(item.receiptId, item.rowVersion, nowMs);
    if (!moved || !attempt) {
      results.push({
        receiptId: item.receiptId,
        result: refusal ? bulkRequeueItemResult(refusal) : 'changed_since_preview',
      });
      continue;
    }
    await audit.record({
      actor,
      action: REQUEUE_ACTION,
      target: { kind: 'settlement', id: item.receiptId },
      reason: job.note,
      operationId: bulkReplayOperationId(job.id, item.receiptId),
      requestId: `bulk-replay-job-${job.id}`,
      before: requeueAuditBefore(attempt),
      after: {
        receiptId: item.receiptId,
        nextVisibleAtMs: moved.nextVisibleAtMs,
        rowVersion: moved.rowVersion,
        bulkJob: job.id,
      },
      outcome: 'APPLIED',
    });
    results.push({ receiptId: item.receiptId, result: 'requeued' });
  }
  return results;
}
