import 'server-only';
import { mayTake, type ActionName } from '../domain/roles';
import { BULK_REPLAY_BATCH_SIZE, classifyBulkReplayItem, type BulkReplayItemResult } from '../domain/settlement';
import type { AuditLog } from '../ports/audit-log';
import type {
  BulkAction,
  BulkJobStarterStanding,
  BulkReplayJob,
  BulkReplayStore,
  BulkWorkerLease,
} from '../ports/bulk-replay';
import { DISCARD_ACTION, REPLAY_ACTION, REQUEUE_ACTION, deadLetterSummary } from './dead-letter-actions';
import { requeueBatchItems } from './bulk-requeue-batch';
import { HOUSEKEEPING_ACTOR } from './expire-proposals';
import type { SettlementServiceDeps } from './settlement-action';
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
  /** Why the job was cancelled instead of worked (its starter may no longer do this), else null. */
  cancelledFor: StarterLoss | null;
}

/** Why a job's starter may no longer have the worker act in their name. */
export type StarterLoss = 'STARTER_DISABLED' | 'STARTER_ROLE_LACKS_PERMISSION' | 'STARTER_NOT_FOUND';

/** The action each item of a job is permitted and audited as, one of ACTION_PERMISSIONS' names. */
const ITEM_ACTIONS = {
  REPLAY: REPLAY_ACTION,
  DISCARD: DISCARD_ACTION,
  REQUEUE: REQUEUE_ACTION,
} as const satisfies Record<BulkAction, ActionName>;

const ITEM_WORK: Record<BulkAction, string> = {
  REPLAY: 'replay dead-lettered settlements',
  DISCARD: 'discard dead-lettered settlements',
  REQUEUE: 'requeue settlements',
};

/**
 * Whether the starter, as they stand now, has lost the authority the job acts on: the
 * rule of the same single action by them (mayTake), plus an account that is still
 * enabled. Null while they keep it.
 */
export function starterLoss(action: BulkAction, standing: BulkJobStarterStanding | null): StarterLoss | null {
  if (!standing) return 'STARTER_NOT_FOUND';
  if (standing.disabled) return 'STARTER_DISABLED';
  if (!standing.role || !mayTake(standing.role, ITEM_ACTIONS[action])) return 'STARTER_ROLE_LACKS_PERMISSION';
  return null;
}

/** The cancel event's reason: who lost which permission, and how. */
export function starterLossReason(action: BulkAction, starterLogin: string, loss: StarterLoss): string {
  const how = {
    STARTER_DISABLED: 'the account was disabled',
    STARTER_ROLE_LACKS_PERMISSION: 'their role no longer has it',
    STARTER_NOT_FOUND: 'the account no longer exists',
  }[loss];
  return `Cancelled by Keel: the job's starter, ${starterLogin}, lost the permission to ${ITEM_WORK[action]} (${how}).`;
}

/**
 * Runs one batch of the oldest RUNNING job no other instance holds, in one transaction,
 * and renews `worker`'s lease on it:
 * each frozen item is replayed, or classified as already replayed, no longer
 * dead-lettered, or changed since the preview (docs/design.md#bulk-replay); a REQUEUE job's items go
 * to requeueBatchItems. Item results commit with
 * the replays, so a worker killed mid-batch leaves that batch wholly undone, and the
 * next run redoes it; the replay's unique operation id guards the rest. Null when no
 * job needs a worker.
 *
 * The job acts in its starter's name, so each batch first re-reads the starter under a
 * row lock; one who was disabled or no longer holds the permission gets the job
 * cancelled, by Keel and audited, instead of a batch.
 */
export function processBulkReplayBatch(
  deps: SettlementServiceDeps,
  worker: BulkWorkerLease,
  batchSize: number = BULK_REPLAY_BATCH_SIZE,
): Promise<BulkReplayBatchReport | null> {
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > BULK_REPLAY_BATCH_SIZE) {
    throw new RangeError(`bulk replay batch size must be 1..${BULK_REPLAY_BATCH_SIZE}`);
  }
  // A worker's batch refuses nothing (a starter who lost the permission gets the job cancelled), so it runs
  // in the unit of work itself rather than through the kernel's transact.
  return deps.unitOfWork.transaction(async ({ replays, bulk, audit }) => {
    const job = await bulk.lockNextRunningJob(worker);
    if (!job) return null;
    const actor = job.startedBy;
    if (!actor) throw new Error(`bulk replay ${job.id} is running without a starter`);
    const standing = await bulk.lockStarterStanding(actor.id);
    const loss = starterLoss(job.action, standing);
    if (loss) return cancelForStarter({ bulk, audit }, job, actor.login, loss);
    const items = await bulk.pendingItems(job.id, batchSize);
    if (job.action === 'REQUEUE') {
      const requeueResults = await requeueBatchItems({ replays, audit }, job, actor, items);
      return finishBatch(bulk, job, worker, requeueResults, { replayed: 0, discarded: 0 });
    }
    const operationIds = new Map(items.map((item) => [item.receiptId, bulkReplayOperationId(job.id, item.receiptId)]));
    const discarding = job.action === 'DISCARD';
    // A discard leaves no replay row: a batch redone after a crash finds its dead letters gone (its results
    // commit with the deletes, so a committed batch is never redone).
    const replayedBefore = discarding
      ? new Set<string>()
      : new Set((await replays.findReplays([...operationIds.values()])).map((r) => r.operationId));
    const open = items.filter((item) => !replayedBefore.has(operationIds.get(item.receiptId)!));
    const deadLetters = new Map(
      (await replays.lockDeadLetters(open.map((item) => item.receiptId))).map((d) => [d.receiptId, d]),
    );

    const results: { receiptId: string; result: BulkReplayItemResult }[] = items.map((item) => {
      const deadLetter = deadLetters.get(item.receiptId);
      const result = classifyBulkReplayItem({
        alreadyReplayed: replayedBefore.has(operationIds.get(item.receiptId)!),
        deadLetter: deadLetter ? { recordedAtMs: deadLetter.recordedAtMs } : null,
        previewRecordedAtMs: item.recordedAtMs,
      });
      return {
        receiptId: item.receiptId,
        result: discarding && result === 'replayed' ? ('discarded' as const) : result,
      };
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
    return finishBatch(bulk, job, worker, results, {
      replayed: toReplay.length,
      discarded: results.filter((r) => r.result === 'discarded').length,
    });
  });
}

/**
 * Cancels the job as a user's cancel does (unprocessed items end as `cancelled`), under the
 * job's lock this batch holds; the status leaves RUNNING in the same commit as the event,
 * so no worker picks the job again and the event is written once.
 */
async function cancelForStarter(
  { bulk, audit }: { bulk: BulkReplayStore; audit: AuditLog },
  job: BulkReplayJob & { previousInstance: string | null },
  starterLogin: string,
  loss: StarterLoss,
): Promise<BulkReplayBatchReport> {
  const cancelledItems = await bulk.markCancelled(job.id);
  await audit.record({
    actor: HOUSEKEEPING_ACTOR,
    action: 'settlement.bulk_replay.cancel' satisfies ActionName,
    target: { kind: 'bulk_replay', id: String(job.id) },
    reason: starterLossReason(job.action, starterLogin, loss),
    requestId: `bulk-replay-job-${job.id}`,
    before: { status: job.status, processedCount: job.processedCount },
    // The cause, not the starter's new role or state: those are the user directory's, which only admins read.
    after: { status: 'CANCELLED', cancelledItems, cause: loss, starter: starterLogin },
    outcome: 'APPLIED',
  });
  return {
    jobId: job.id,
    processed: 0,
    replayed: 0,
    discarded: 0,
    requeued: 0,
    finished: false,
    takenOverFrom: job.previousInstance,
    cancelledFor: loss,
  };
}

/**
 * Records a batch's results, and completes the job when none is left, else renews the worker's lease on it from now.
 */
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
  return {
    jobId: job.id,
    processed: results.length,
    ...done,
    requeued,
    finished,
    takenOverFrom: job.previousInstance,
    cancelledFor: null,
  };
}
