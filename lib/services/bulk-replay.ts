import 'server-only';
import type { Actor } from '../domain/actor';
import { err, ok } from '../domain/result';
import {
  deadLetterFilterSchema,
  type DeadLetterFilter,
  type UncheckedDeadLetterFilter,
} from '../domain/dead-letter-filter';
import { BULK_REPLAY_PREVIEW_CAP } from '../domain/settlement';
import type {
  BulkAction,
  BulkReplayCounts,
  BulkReplayItemOutcome,
  BulkReplayItemView,
  BulkReplayJob,
  BulkReplaySampleItem,
} from '../ports/bulk-replay';
import type { SettlementReplayPorts } from '../ports/settlement-replay';
import type { UnitOfWork } from '../ports/unit-of-work';
import {
  inputProblem,
  refuse,
  runSettlementAction,
  runSettlementRead,
  type ServiceError,
  type ServiceResult,
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

/** The filter with only the fields it may hold, or why it cannot be used (the domain's one validator). */
export function normalizeDeadLetterFilter(filter: UncheckedDeadLetterFilter): ServiceResult<DeadLetterFilter> {
  const parsed = deadLetterFilterSchema.safeParse(filter);
  if (parsed.success) return ok(parsed.data);
  const issue = parsed.error.issues[0]!;
  return err<ServiceError>({
    code: 'INVALID_FILTER',
    message: `${issue.path.join('.') || 'filter'}: ${issue.message}`,
  });
}

const jobTarget = (jobId: number | string) => ({ kind: 'bulk_replay', id: String(jobId) });

/**
 * Freezes the dead letters matching the filter into a new job's items with one
 * INSERT ... SELECT (docs/design.md#bulk-replay); the job replays exactly those, never later arrivals.
 * More than 100,000 matches is refused rather than cut short.
 */
export function previewBulkReplay(
  transactions: UnitOfWork<SettlementReplayPorts>,
  actor: Actor,
  input: { filter: UncheckedDeadLetterFilter; note: string; action?: BulkAction },
): Promise<ServiceResult<BulkReplayPreview>> {
  const action: BulkAction = input.action ?? 'REPLAY';
  const note = input.note.trim();
  const filter = normalizeDeadLetterFilter(input.filter);
  return runSettlementAction(transactions, {
    actor,
    action: 'settlement.bulk_replay.preview',
    target: jobTarget('new'),
    note,
    invalid:
      inputProblem({ note, noteRequired: true }) ??
      (action === 'REPLAY' || action === 'DISCARD'
        ? null
        : { code: 'INVALID_INPUT', message: 'A bulk action is REPLAY or DISCARD.' }) ??
      (filter.ok ? null : filter.error),
    async work({ replays, bulk }) {
      if (!filter.ok) throw new Error('unreachable: the filter was checked');
      const asOfMs = await replays.serverNowMs();
      const { jobId, itemCount } = await bulk.createPreview({
        actor,
        action,
        note,
        filter: filter.value,
        asOfMs,
        limit: BULK_REPLAY_PREVIEW_CAP + 1,
      });
      if (itemCount > BULK_REPLAY_PREVIEW_CAP) {
        refuse(
          'PREVIEW_TOO_LARGE',
          `More than ${BULK_REPLAY_PREVIEW_CAP.toLocaleString('en-US')} dead letters match; narrow the filter.`,
        );
      }
      const sample = await bulk.sample(jobId, PREVIEW_SAMPLE_SIZE);
      return {
        value: { jobId, itemCount, asOfMs, sample },
        audit: true,
        targetId: String(jobId),
        after: { action, filter: filter.value, asOfMs, itemCount },
      };
    },
  });
}

/** Hands a previewed job to the worker. Starting a job that already runs or ran returns it as it is. */
export function startBulkReplay(
  transactions: UnitOfWork<SettlementReplayPorts>,
  actor: Actor,
  input: { jobId: number },
): Promise<ServiceResult<BulkReplayJob>> {
  return runSettlementAction(transactions, {
    actor,
    action: 'settlement.bulk_replay.start',
    target: jobTarget(input.jobId),
    async work({ bulk }) {
      const job = await bulk.lockJob(input.jobId);
      if (!job) refuse('NOT_FOUND', `No bulk replay ${input.jobId}.`);
      if (job.status === 'CANCELLED') refuse('CONFLICT', 'The bulk replay was cancelled; preview again.');
      if (job.status !== 'PREVIEWED') return { value: job, audit: false };
      await bulk.markStarted(job.id, actor);
      const started = await bulk.job(job.id);
      return {
        value: started!,
        audit: true,
        before: { status: job.status },
        after: { status: 'RUNNING', itemCount: job.itemCount },
      };
    },
  });
}

/**
 * Stops a job between batches: the job row lock waits for a batch in flight, so a
 * cancel never splits one. Unprocessed items end as `cancelled`; results so far stay.
 */
export function cancelBulkReplay(
  transactions: UnitOfWork<SettlementReplayPorts>,
  actor: Actor,
  input: { jobId: number; note?: string },
): Promise<ServiceResult<BulkReplayProgress>> {
  const note = input.note?.trim() ?? '';
  return runSettlementAction(transactions, {
    actor,
    action: 'settlement.bulk_replay.cancel',
    target: jobTarget(input.jobId),
    note,
    invalid: inputProblem({ note, noteRequired: false }),
    async work({ bulk }) {
      const job = await bulk.lockJob(input.jobId);
      if (!job) refuse('NOT_FOUND', `No bulk replay ${input.jobId}.`);
      if (job.status === 'COMPLETED') refuse('CONFLICT', 'The bulk replay already completed.');
      const repeat = job.status === 'CANCELLED';
      const cancelledItems = repeat ? 0 : await bulk.markCancelled(job.id);
      const value = { job: (await bulk.job(job.id))!, counts: await bulk.counts(job.id) };
      return {
        value,
        audit: !repeat,
        before: { status: job.status, processedCount: job.processedCount },
        after: { status: 'CANCELLED', cancelledItems },
      };
    },
  });
}

export function bulkReplayProgress(
  transactions: UnitOfWork<SettlementReplayPorts>,
  actor: Actor,
  jobId: number,
): Promise<ServiceResult<BulkReplayProgress>> {
  return runSettlementRead(transactions, actor, async ({ bulk }) => {
    const job = await bulk.job(jobId);
    if (!job) return err({ code: 'NOT_FOUND', message: `No bulk replay ${jobId}.` });
    return ok({ job, counts: await bulk.counts(jobId) });
  });
}

/** A job's items in receipt order, keyset-paged, optionally of one result. */
export function bulkReplayItems(
  transactions: UnitOfWork<SettlementReplayPorts>,
  actor: Actor,
  input: { jobId: number; after?: string; result?: BulkReplayItemOutcome | 'pending'; limit?: number },
): Promise<ServiceResult<BulkReplayItemsPage>> {
  const limit = Math.min(Math.max(Math.trunc(input.limit ?? 100), 1), MAX_ITEMS_PAGE);
  return runSettlementRead(transactions, actor, async ({ bulk }) => {
    if (!(await bulk.job(input.jobId))) return err({ code: 'NOT_FOUND', message: `No bulk replay ${input.jobId}.` });
    const items = await bulk.items(input.jobId, { after: input.after, result: input.result, limit: limit + 1 });
    const page = items.slice(0, limit);
    return ok({ items: page, nextAfter: items.length > limit ? page.at(-1)!.receiptId : null });
  });
}
