import { z } from 'zod';
import { cursorText, singleLineText } from '../domain/text';
import type { CappedCount } from '../domain/cursor';
import { FAILURE_CODES, MAX_U32 } from '../domain/settlement-vocabulary';
import type { BulkReplayCounts, BulkReplayItemOutcome, BulkReplayStatus, DeadLetterFilter } from '../ports/bulk-replay';

/**
 * The settlement views' filters and shapes, shared by the queries, the read API, the
 * server actions and the client components (so nothing here imports the database).
 */

/** Queue states as the metrics count them: a live lease wins, then visibility. */
export const QUEUE_STATES = ['due', 'leased', 'retry_scheduled'] as const;
export type QueueState = (typeof QUEUE_STATES)[number];
export const QUEUE_STATE_FILTERS = [...QUEUE_STATES, 'all'] as const;

const AGE_PATTERN = /^(\d{1,6})(s|m|h|d)$/;
const AGE_UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `30m`, `6h`, `2d`: an age as the URL and the forms write it, in milliseconds. */
export function ageToMs(age: string | undefined): number | undefined {
  const match = age ? AGE_PATTERN.exec(age) : null;
  return match ? Number(match[1]) * AGE_UNIT_MS[match[2] as keyof typeof AGE_UNIT_MS] : undefined;
}

// An emptied form field or `?reason=` means "any".
const optional = <S extends z.ZodType>(schema: S) => z.preprocess((v) => (v === '' || v === null ? undefined : v), schema.optional());
const attempts = optional(z.coerce.number().int('A whole number.').min(0).max(MAX_U32));
const age = optional(z.string().trim().regex(AGE_PATTERN, 'An age such as 45s, 30m, 6h or 2d.'));

const commonFilters = z.object({
  /** Receipt id prefix, matched exactly (no wildcards). */
  q: optional(singleLineText(256, { trim: false, tooLong: 'At most 256 characters.' })),
  reason: optional(z.enum(FAILURE_CODES)),
  minAttempts: attempts,
  maxAttempts: attempts,
  minAge: age,
  maxAge: age,
  cursor: optional(cursorText(400)),
});

const bounded = <T extends { minAttempts?: number; maxAttempts?: number; minAge?: string; maxAge?: string }>(f: T, ctx: z.RefinementCtx) => {
  if (f.minAttempts !== undefined && f.maxAttempts !== undefined && f.minAttempts > f.maxAttempts) {
    ctx.addIssue({ code: 'custom', path: ['maxAttempts'], message: 'Below the minimum attempts.' });
  }
  const [min, max] = [ageToMs(f.minAge), ageToMs(f.maxAge)];
  if (min !== undefined && max !== undefined && min > max) ctx.addIssue({ code: 'custom', path: ['maxAge'], message: 'Below the minimum age.' });
};

/** The dead-letter view's filters: age is the time since the dead letter was recorded. */
export const deadLetterFiltersSchema = commonFilters.superRefine(bounded);
export type DeadLetterFilters = z.output<typeof deadLetterFiltersSchema>;

/** The queue view's filters: age is the time since the row became due (negative for a future retry). */
export const queueFiltersSchema = commonFilters.extend({ state: optional(z.enum(QUEUE_STATE_FILTERS)) }).superRefine(bounded);
export type QueueFilters = z.output<typeof queueFiltersSchema>;

export const FILTER_KEYS = ['q', 'reason', 'minAttempts', 'maxAttempts', 'minAge', 'maxAge'] as const;

/** The filter a bulk replay freezes: exactly what the dead-letter list shows for the same fields. */
export function toDeadLetterFilter(filters: DeadLetterFilters): DeadLetterFilter {
  const out: DeadLetterFilter = {};
  if (filters.reason) out.reason = filters.reason;
  if (filters.q) out.receiptIdPrefix = filters.q;
  if (filters.minAttempts !== undefined) out.minAttempts = filters.minAttempts;
  if (filters.maxAttempts !== undefined) out.maxAttempts = filters.maxAttempts;
  const minAgeMs = ageToMs(filters.minAge);
  const maxAgeMs = ageToMs(filters.maxAge);
  if (minAgeMs !== undefined) out.minAgeMs = minAgeMs;
  if (maxAgeMs !== undefined) out.maxAgeMs = maxAgeMs;
  return out;
}

export interface QueueRow {
  receiptId: string;
  state: QueueState;
  workKind: 'pending_observation' | 'retry_scheduled';
  attempts: number;
  nextVisibleAtMs: number;
  rowVersion: number;
  leaseOwner: string | null;
  leaseUntilMs: number | null;
  reasonCode: string | null;
  finalizedAt: number;
}

export interface QueuePage {
  rows: QueueRow[];
  nextCursor: string | null;
  count: CappedCount;
  /** Each state's count under the same filters, and the dead letters' (with their own age). */
  stateCounts: Record<QueueState | 'dead_lettered', CappedCount>;
  serverNowMs: number;
}

export interface DeadLetterRow {
  receiptId: string;
  reason: string;
  attempts: number;
  recordedAtMs: number;
  finalizedAt: number;
}

export interface DeadLetterPage {
  rows: DeadLetterRow[];
  nextCursor: string | null;
  count: CappedCount;
  serverNowMs: number;
}

export interface DeadLetterGroups {
  /** Every reason code with at least one match, largest first. */
  groups: { reason: string; count: CappedCount }[];
  serverNowMs: number;
}

export interface ReceiptHistory {
  receiptId: string;
  serverNowMs: number;
  /** Where the receipt is now: queued, dead-lettered, or neither (finished or discarded). */
  queued: QueueRow | null;
  deadLetter: (DeadLetterRow & { canonicalJson: string }) | null;
  events: { id: number; kind: string; attempt: number; reasonCode: string | null; atMs: number }[];
  replays: { operationId: string; priorAttempts: number; priorReason: string; actorLogin: string; note: string; bulkJob: number | null; at: string }[];
  audit: { id: number; at: string; actorLogin: string; actorRole: string; action: string; outcome: string; code: string | null; reason: string | null }[];
  /** True when a list was cut at its limit. */
  truncated: boolean;
}

export interface BulkReplayJobView {
  id: number;
  /** REPLAY or DISCARD: what the job does to each frozen dead letter. */
  action: 'REPLAY' | 'DISCARD';
  status: BulkReplayStatus;
  note: string;
  filter: DeadLetterFilter & { asOfMs: number };
  itemCount: number;
  processedCount: number;
  createdBy: string;
  startedBy: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

export const BULK_REPLAY_STATUSES = ['PREVIEWED', 'RUNNING', 'CANCELLED', 'COMPLETED'] as const satisfies readonly BulkReplayStatus[];
export const BULK_ITEM_RESULTS = ['pending', 'replayed', 'discarded', 'already_replayed', 'no_longer_dead_lettered', 'changed_since_preview', 'cancelled'] as const satisfies readonly (BulkReplayItemOutcome | 'pending')[];

export const bulkReplayListSchema = z.object({ status: optional(z.enum(BULK_REPLAY_STATUSES)), cursor: optional(cursorText(100)) });
// `after` is the last receipt id shown: free text, kept as given.
export const bulkReplayItemsSchema = z.object({ result: optional(z.enum(BULK_ITEM_RESULTS)), after: optional(singleLineText(1_000, { trim: false })) });

export interface BulkReplayListPage {
  jobs: BulkReplayJobView[];
  nextCursor: string | null;
  serverNowMs: number;
}

export interface BulkReplayDetail {
  job: BulkReplayJobView;
  counts: BulkReplayCounts;
  items: { receiptId: string; recordedAtMs: number; result: BulkReplayItemOutcome | null; processedAt: string | null }[];
  nextAfter: string | null;
  serverNowMs: number;
}
