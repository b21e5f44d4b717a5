import { z } from 'zod';
import { singleLineText } from '../domain/text';
import type { CappedCount } from '../domain/cursor';
import { BULK_REPLAY_STATUSES, type BulkReplayStatus } from '../domain/settlement-vocabulary';
import {
  AGE_FORMAT_MESSAGE,
  deadLetterFilterFields,
  deadLetterFilterSchema,
  FILTER_FIELD_WORD,
  isAgeText,
  toDeadLetterFilter,
  type DeadLetterFilter,
  type DeadLetterFilterWords,
} from '../domain/dead-letter-filter';
import { QUEUE_STATES, type QueueState } from '../domain/queue-state';
import type { BulkReplayCounts, BulkReplayItemOutcome } from '../ports/bulk-replay';
import type { DeadLetterRecordReading } from '../domain/dead-letter-record';
import { BULK_ITEM_RESULTS, QUEUE_STATE_FILTERS } from './settlements-filter-types';

export { BULK_ITEM_RESULTS, BULK_REPLAY_STATUSES, FILTER_KEYS, QUEUE_STATE_FILTERS } from './settlements-filter-types';

/**
 * The settlement views' filters and shapes, shared by the queries, the read API, the
 * server actions and the client components (so nothing here imports the database).
 */

export { QUEUE_STATES, type QueueState };

// An emptied form field or `?reason=` means "any".
const optional = <S extends z.ZodType>(schema: S) =>
  z.preprocess((v) => (v === '' || v === null ? undefined : v), schema.optional());
// The URL's words are text: each is coerced, then checked by the domain's own field bounds.
const attempts = optional(z.coerce.number().pipe(deadLetterFilterFields.attempts));
const age = optional(z.string().trim().refine(isAgeText, AGE_FORMAT_MESSAGE));

const commonFilters = z.object({
  /** Receipt id prefix, matched exactly (no wildcards). */
  q: optional(deadLetterFilterFields.receiptIdPrefix),
  reason: optional(deadLetterFilterFields.reason),
  minAttempts: attempts,
  maxAttempts: attempts,
  minAge: age,
  maxAge: age,
});

/** The URL's words checked by the domain's one filter validator; its problems land on the word's field. */
const asFilter = (words: DeadLetterFilterWords, ctx: z.RefinementCtx) => {
  const parsed = deadLetterFilterSchema.safeParse(toDeadLetterFilter(words));
  if (parsed.success) return;
  for (const issue of parsed.error.issues) {
    const field = FILTER_FIELD_WORD[issue.path[0] as keyof typeof FILTER_FIELD_WORD];
    ctx.addIssue({ code: 'custom', path: field ? [field] : [], message: issue.message });
  }
};

/** The dead-letter view's filters: age is the time since the dead letter was recorded. */
export const deadLetterFiltersSchema = commonFilters.superRefine(asFilter);
export type DeadLetterFilters = z.output<typeof deadLetterFiltersSchema>;

/** The queue view's filters: age is the time since the row became due (negative for a future retry). */
export const queueFiltersSchema = commonFilters
  .extend({ state: optional(z.enum(QUEUE_STATE_FILTERS)) })
  .superRefine(asFilter);
export type QueueFilters = z.output<typeof queueFiltersSchema>;

export { toDeadLetterFilter };

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
  /** The failure detail's SHA-256 from the stored JSON, as lowercase hex; null when the JSON cannot be read. */
  detailSha256Hex: string | null;
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
  queued: (QueueRow & { reasonDetailSha256Hex: string | null }) | null;
  /** `record`: the stored JSON read for people (the detail digest as hex, fields that disagree with the row). */
  deadLetter: (DeadLetterRow & { canonicalJson: string; record: DeadLetterRecordReading }) | null;
  /**
   * Newest first. An outcome carries the time of the claim that led to it (null before
   * drizzle/0028); a `claimed` event is a claim that ended without an outcome.
   */
  events: {
    id: number;
    kind: string;
    attempt: number;
    reasonCode: string | null;
    atMs: number;
    claimedAtMs: number | null;
  }[];
  replays: {
    operationId: string;
    priorAttempts: number;
    priorReason: string;
    actorLogin: string;
    note: string;
    bulkJob: number | null;
    at: string;
  }[];
  audit: {
    id: number;
    at: string;
    actorLogin: string;
    actorRole: string;
    action: string;
    outcome: string;
    code: string | null;
    reason: string | null;
  }[];
  /** True when a list was cut at its limit. */
  truncated: boolean;
}

export interface BulkReplayJobView {
  id: number;
  /** REPLAY or DISCARD: what the job does to each frozen dead letter. */
  action: 'REPLAY' | 'DISCARD' | 'REQUEUE';
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
  /** The Keel instance working the job (or that last worked it). */
  workerInstance: string | null;
}

// The lists' keyset cursors are added by their reads, decoded by the schema (lib/reads/settlements.ts).
export const bulkReplayListSchema = z.object({ status: optional(z.enum(BULK_REPLAY_STATUSES)) });
// `after` is the last receipt id shown: free text, kept as given.
export const bulkReplayItemsSchema = z.object({
  result: optional(z.enum(BULK_ITEM_RESULTS)),
  after: optional(singleLineText(1_000, { trim: false })),
});

export interface BulkReplayListPage {
  jobs: BulkReplayJobView[];
  nextCursor: string | null;
  serverNowMs: number;
}

export interface BulkReplayDetail {
  job: BulkReplayJobView;
  counts: BulkReplayCounts;
  items: {
    receiptId: string;
    recordedAtMs: number;
    result: BulkReplayItemOutcome | null;
    processedAt: string | null;
  }[];
  nextAfter: string | null;
  serverNowMs: number;
}
