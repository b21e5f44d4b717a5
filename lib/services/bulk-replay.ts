import 'server-only';
import type { Actor } from '../domain/actor';
import { err, ok } from '../domain/result';
import { textProblem } from '../domain/text';
import { BULK_REPLAY_PREVIEW_CAP, MAX_U32, isFailureCode } from '../domain/settlement';
import type {
  BulkAction,
  BulkReplayCounts,
  BulkReplayItemOutcome,
  BulkReplayItemView,
  BulkReplayJob,
  BulkReplaySampleItem,
  DeadLetterFilter,
} from '../ports/bulk-replay';
import type { SettlementTransactions } from '../ports/settlement-replay';
import { inputProblem, refuse, runSettlementAction, runSettlementRead, type ServiceError, type ServiceResult } from './settlement-action';

export const PREVIEW_SAMPLE_SIZE = 20;
export const MAX_ITEMS_PAGE = 500;
const MAX_PREFIX_LENGTH = 256;
/** A selection is what a person ticked on the dead letters page: bounded well below the filter's cap. */
export const MAX_SELECTED_RECEIPTS = 1_000;
const MAX_RECEIPT_ID_LENGTH = 1_000;

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

const isCount = (value: unknown, max = Number.MAX_SAFE_INTEGER): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && value <= max;

/** The filter with only the fields it may hold, or why it cannot be used. */
export function normalizeDeadLetterFilter(filter: DeadLetterFilter): ServiceResult<DeadLetterFilter> {
  const invalid = (message: string) => err<ServiceError>({ code: 'INVALID_FILTER', message });
  const out: DeadLetterFilter = {};
  if (filter.reason !== undefined) {
    if (!isFailureCode(filter.reason)) return invalid(`Unknown reason code ${String(filter.reason)}.`);
    out.reason = filter.reason;
  }
  for (const key of ['minAgeMs', 'maxAgeMs'] as const) {
    if (filter[key] === undefined) continue;
    if (!isCount(filter[key])) return invalid(`${key} must be a whole number of milliseconds.`);
    out[key] = filter[key];
  }
  for (const key of ['minAttempts', 'maxAttempts'] as const) {
    if (filter[key] === undefined) continue;
    if (!isCount(filter[key], MAX_U32)) return invalid(`${key} must be a whole number.`);
    out[key] = filter[key];
  }
  if (out.minAgeMs !== undefined && out.maxAgeMs !== undefined && out.minAgeMs > out.maxAgeMs) return invalid('The minimum age is above the maximum age.');
  if (out.minAttempts !== undefined && out.maxAttempts !== undefined && out.minAttempts > out.maxAttempts) return invalid('The minimum attempts are above the maximum.');
  if (filter.receiptIdPrefix !== undefined && filter.receiptIdPrefix !== '') {
    if (typeof filter.receiptIdPrefix !== 'string' || filter.receiptIdPrefix.length > MAX_PREFIX_LENGTH) {
      return invalid(`The receipt id prefix must be at most ${MAX_PREFIX_LENGTH} characters.`);
    }
    out.receiptIdPrefix = filter.receiptIdPrefix;
  }
  if (filter.receiptIds !== undefined) {
    const ids = filter.receiptIds;
    if (!Array.isArray(ids) || ids.length === 0 || ids.length > MAX_SELECTED_RECEIPTS) {
      return invalid(`Select 1 to ${MAX_SELECTED_RECEIPTS.toLocaleString('en-US')} dead letters.`);
    }
    if (!ids.every((id) => typeof id === 'string' && id !== '' && id.length <= MAX_RECEIPT_ID_LENGTH && !textProblem(id))) {
      return invalid('A selected receipt id is not valid.');
    }
    out.receiptIds = [...new Set(ids)].sort();
  }
  return ok(out);
}

const jobTarget = (jobId: number | string) => ({ kind: 'bulk_replay', id: String(jobId) });

/**
 * Freezes the dead letters matching the filter into a new job's items with one
 * INSERT ... SELECT (DESIGN.md 5.2); the job replays exactly those, never later arrivals.
 * More than 100,000 matches is refused rather than cut short.
 */
export function previewBulkReplay(
  transactions: SettlementTransactions,
  actor: Actor,
  input: { filter: DeadLetterFilter; note: string; action?: BulkAction },
): Promise<ServiceResult<BulkReplayPreview>> {
  const action: BulkAction = input.action ?? 'REPLAY';
  const note = input.note.trim();
  const filter = normalizeDeadLetterFilter(input.filter);
  return runSettlementAction(transactions, {
    actor, action: 'settlement.bulk_replay.preview', target: jobTarget('new'), note,
    invalid:
      inputProblem({ note, noteRequired: true }) ??
      (action === 'REPLAY' || action === 'DISCARD' ? null : { code: 'INVALID_INPUT', message: 'A bulk action is REPLAY or DISCARD.' }) ??
      (filter.ok ? null : filter.error),
    async work({ replays, bulk }) {
      if (!filter.ok) throw new Error('unreachable: the filter was checked');
      const asOfMs = await replays.serverNowMs();
      const { jobId, itemCount } = await bulk.createPreview({ actor, action, note, filter: filter.value, asOfMs, limit: BULK_REPLAY_PREVIEW_CAP + 1 });
      if (itemCount > BULK_REPLAY_PREVIEW_CAP) {
        refuse('PREVIEW_TOO_LARGE', `More than ${BULK_REPLAY_PREVIEW_CAP.toLocaleString('en-US')} dead letters match; narrow the filter.`);
      }
      const sample = await bulk.sample(jobId, PREVIEW_SAMPLE_SIZE);
      return { value: { jobId, itemCount, asOfMs, sample }, audit: true, targetId: String(jobId), after: { action, filter: filter.value, asOfMs, itemCount } };
    },
  });
}

/** Hands a previewed job to the worker. Starting a job that already runs or ran returns it as it is. */
export function startBulkReplay(transactions: SettlementTransactions, actor: Actor, input: { jobId: number }): Promise<ServiceResult<BulkReplayJob>> {
  return runSettlementAction(transactions, {
    actor, action: 'settlement.bulk_replay.start', target: jobTarget(input.jobId),
    async work({ bulk }) {
      const job = await bulk.lockJob(input.jobId);
      if (!job) refuse('NOT_FOUND', `No bulk replay ${input.jobId}.`);
      if (job.status === 'CANCELLED') refuse('CONFLICT', 'The bulk replay was cancelled; preview again.');
      if (job.status !== 'PREVIEWED') return { value: job, audit: false };
      await bulk.markStarted(job.id, actor);
      const started = await bulk.job(job.id);
      return { value: started!, audit: true, before: { status: job.status }, after: { status: 'RUNNING', itemCount: job.itemCount } };
    },
  });
}

/**
 * Stops a job between batches: the job row lock waits for a batch in flight, so a
 * cancel never splits one. Unprocessed items end as `cancelled`; results so far stay.
 */
export function cancelBulkReplay(transactions: SettlementTransactions, actor: Actor, input: { jobId: number; note?: string }): Promise<ServiceResult<BulkReplayProgress>> {
  const note = input.note?.trim() ?? '';
  return runSettlementAction(transactions, {
    actor, action: 'settlement.bulk_replay.cancel', target: jobTarget(input.jobId), note,
    invalid: inputProblem({ note, noteRequired: false }),
    async work({ bulk }) {
      const job = await bulk.lockJob(input.jobId);
      if (!job) refuse('NOT_FOUND', `No bulk replay ${input.jobId}.`);
      if (job.status === 'COMPLETED') refuse('CONFLICT', 'The bulk replay already completed.');
      const repeat = job.status === 'CANCELLED';
      const cancelledItems = repeat ? 0 : await bulk.markCancelled(job.id);
      const value = { job: (await bulk.job(job.id))!, counts: await bulk.counts(job.id) };
      return { value, audit: !repeat, before: { status: job.status, processedCount: job.processedCount }, after: { status: 'CANCELLED', cancelledItems } };
    },
  });
}

export function bulkReplayProgress(transactions: SettlementTransactions, actor: Actor, jobId: number): Promise<ServiceResult<BulkReplayProgress>> {
  return runSettlementRead(transactions, actor, async ({ bulk }) => {
    const job = await bulk.job(jobId);
    if (!job) return err({ code: 'NOT_FOUND', message: `No bulk replay ${jobId}.` });
    return ok({ job, counts: await bulk.counts(jobId) });
  });
}

/** A job's items in receipt order, keyset-paged, optionally of one result. */
export function bulkReplayItems(
  transactions: SettlementTransactions,
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
