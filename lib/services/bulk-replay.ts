import 'server-only';
import type { Actor } from '../domain/actor';
import { err, ok } from '../domain/result';
import type { DeadLetterFilter } from '../domain/dead-letter-filter';
import { BULK_REPLAY_PREVIEW_CAP } from '../domain/settlement';
import type {
  BulkAction,
  BulkReplayCounts,
  BulkReplayItemOutcome,
  BulkReplayItemView,
  BulkReplayJob,
  BulkReplaySampleItem,
} from '../ports/bulk-replay';
import { serviceError, type ServiceResult } from './kernel';
import {
  refuseSettlement,
  runSettlementAction,
  runSettlementRead,
  settlementRequest,
  type SettlementServiceDeps,
} from './settlement-action';

export const PREVIEW_SAMPLE_SIZE = 20;
export const MAX_ITEMS_PAGE = 500;
export { MAX_SELECTED_RECEIPTS } from '../domain/dead-letter-filter';

export interface BulkReplayPreview {
  jobId: number;
  itemCount: number;
  /** The server time the filter's ages were measured from. */
  asOfMs: number;
  sample: BulkReplaySampleItem[];
}

export interface BulkReplayProgress {
  job: BulkReplayJob;
  counts: BulkReplayCounts;
}

export interface BulkReplayItemsPage {
  items: BulkReplayItemView[];
  /** Pass as `after` for the next page; null on the last one. */
  nextAfter: string | null;
}

const jobTarget = (jobId: number | string) => ({ kind: 'bulk_replay', id: String(jobId) });

/**
 * Freezes the dead letters matching the filter into a new job's items with one
 * INSERT ... SELECT (docs/design.md#bulk-replay); the job replays exactly those, never later arrivals.
 * More than 100,000 matches is refused rather than cut short.
 */
export function previewBulkReplay(
  deps: SettlementServiceDeps,
  actor: Actor,
  input: { filter: DeadLetterFilter; note: string; action?: 'REPLAY' | 'DISCARD' },
): Promise<ServiceResult<BulkReplayPreview>> {
  const { filter, note } = input;
  const action: BulkAction = input.action ?? 'REPLAY';
  const request = settlementRequest(actor, 'settlement.bulk_replay.preview', jobTarget('new'), { note });
  return runSettlementAction(deps, request, async ({ replays, bulk }) => {
    const asOfMs = await replays.serverNowMs();
    const { jobId, itemCount } = await bulk.createPreview({
      actor,
      action,
      note,
      filter,
      asOfMs,
      limit: BULK_REPLAY_PREVIEW_CAP + 1,
    });
    // The job and its items just written roll back with the refusal.
    if (itemCount > BULK_REPLAY_PREVIEW_CAP) {
      const cap = BULK_REPLAY_PREVIEW_CAP.toLocaleString('en-US');
      refuseSettlement(request, 'PREVIEW_TOO_LARGE', `More than ${cap} dead letters match; narrow the filter.`);
    }
    const sample = await bulk.sample(jobId, PREVIEW_SAMPLE_SIZE);
    return {
      value: { jobId, itemCount, asOfMs, sample },
      audit: true,
      targetId: String(jobId),
      after: { action, filter, asOfMs, itemCount },
    };
  });
}

/** Hands a previewed job to the worker. Starting a job that already runs or ran returns it as it is. */
export function startBulkReplay(
  deps: SettlementServiceDeps,
  actor: Actor,
  input: { jobId: number },
): Promise<ServiceResult<BulkReplayJob>> {
  const request = settlementRequest(actor, 'settlement.bulk_replay.start', jobTarget(input.jobId));
  return runSettlementAction(deps, request, async ({ bulk }) => {
    const job = await bulk.lockJob(input.jobId);
    if (!job) refuseSettlement(request, 'NOT_FOUND', `No bulk replay ${input.jobId}.`);
    if (job.status === 'CANCELLED')
      refuseSettlement(request, 'CONFLICT', 'The bulk replay was cancelled; preview again.');
    if (job.status !== 'PREVIEWED') return { value: job, audit: false };
    await bulk.markStarted(job.id, actor);
    const started = await bulk.job(job.id);
    return {
      value: started!,
      audit: true,
      before: { status: job.status },
      after: { status: 'RUNNING', itemCount: job.itemCount },
    };
  });
}

/**
 * Stops a job between batches: the job row lock waits for a batch in flight, so a
 * cancel never splits one. Unprocessed items end as `cancelled`; results so far stay.
 */
export function cancelBulkReplay(
  deps: SettlementServiceDeps,
  actor: Actor,
  input: { jobId: number; note?: string },
): Promise<ServiceResult<BulkReplayProgress>> {
  const request = settlementRequest(actor, 'settlement.bulk_replay.cancel', jobTarget(input.jobId), input);
  return runSettlementAction(deps, request, async ({ bulk }) => {
    const job = await bulk.lockJob(input.jobId);
    if (!job) refuseSettlement(request, 'NOT_FOUND', `No bulk replay ${input.jobId}.`);
    if (job.status === 'COMPLETED') refuseSettlement(request, 'CONFLICT', 'The bulk replay already completed.');
    const repeat = job.status === 'CANCELLED';
    const cancelledItems = repeat ? 0 : await bulk.markCancelled(job.id);
    const value = { job: (await bulk.job(job.id))!, counts: await bulk.counts(job.id) };
    return {
      value,
      audit: !repeat,
      before: { status: job.status, processedCount: job.processedCount },
      after: { status: 'CANCELLED', cancelledItems },
    };
  });
}

export function bulkReplayProgress(
  deps: SettlementServiceDeps,
  actor: Actor,
  jobId: number,
): Promise<ServiceResult<BulkReplayProgress>> {
  return runSettlementRead(deps, actor, async ({ bulk }) => {
    const job = await bulk.job(jobId);
    if (!job) return err(serviceError('NOT_FOUND', `No bulk replay ${jobId}.`));
    return ok({ job, counts: await bulk.counts(jobId) });
  });
}

/** A job's items in receipt order, keyset-paged, optionally of one result. */
export function bulkReplayItems(
  deps: SettlementServiceDeps,
  actor: Actor,
  input: { jobId: number; after?: string; result?: BulkReplayItemOutcome | 'pending'; limit?: number },
): Promise<ServiceResult<BulkReplayItemsPage>> {
  const limit = Math.min(Math.max(Math.trunc(input.limit ?? 100), 1), MAX_ITEMS_PAGE);
  return runSettlementRead(deps, actor, async ({ bulk }) => {
    if (!(await bulk.job(input.jobId))) return err(serviceError('NOT_FOUND', `No bulk replay ${input.jobId}.`));
    const items = await bulk.items(input.jobId, { after: input.after, result: input.result, limit: limit + 1 });
    const page = items.slice(0, limit);
    return ok({ items: page, nextAfter: items.length > limit ? page.at(-1)!.receiptId : null });
  });
}
