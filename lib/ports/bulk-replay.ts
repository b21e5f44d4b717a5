import type { Actor } from '../domain/actor';
import type { DeadLetterFilter } from '../domain/dead-letter-filter';
import type { Role } from '../domain/roles';
import type { BulkReplayItemResult, BulkReplayStatus } from '../domain/settlement-vocabulary';

/**
 * What the job does to each frozen item: queue a dead letter again, delete it for good,
 * or make a retry-scheduled settlement due now.
 */
export type BulkAction = 'REPLAY' | 'DISCARD' | 'REQUEUE';
/** An item's result; `cancelled` marks items a cancel left unprocessed. */
export type BulkReplayItemOutcome = BulkReplayItemResult | 'cancelled';

export interface BulkReplayJob {
  id: number;
  action: BulkAction;
  status: BulkReplayStatus;
  note: string;
  /** The filter as previewed, with `asOfMs`, the server time its ages were measured from. */
  filter: DeadLetterFilter & { asOfMs: number };
  itemCount: number;
  processedCount: number;
  createdBy: { id: string; login: string };
  startedBy: Pick<Actor, 'id' | 'login' | 'role'> | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  cancelledAt: Date | null;
  /** The Keel instance that works (or last worked) the job. */
  workerInstance: string | null;
}

export interface BulkWorkerLease {
  instance: string;
  leaseMs: number;
}

/** A job's starter as `keel.user` holds them now; `role` is null for a role Keel does not know. */
export interface BulkJobStarterStanding {
  role: Role | null;
  disabled: boolean;
}

export interface BulkReplayItemView {
  receiptId: string;
  /** `recorded_at_ms` of the dead letter frozen at preview. */
  recordedAtMs: number;
  result: BulkReplayItemOutcome | null;
  processedAt: Date | null;
}

export interface BulkReplaySampleItem {
  receiptId: string;
  reason: string;
  attempts: number;
  recordedAtMs: number;
}

export interface BulkRequeueSampleItem {
  receiptId: string;
  attempts: number;
  reasonCode: string | null;
  nextVisibleAtMs: number;
}

export type BulkReplayCounts = Record<BulkReplayItemOutcome | 'pending', number>;

/** Bulk replay jobs and their frozen items. Bound to one transaction, like the replay store. */
export interface BulkReplayStore {
  /**
   * Creates a PREVIEWED job and freezes the matching dead letters into its items with
   * one INSERT ... SELECT, stopping at `limit` rows; returns the job id and the count.
   */
  createPreview(input: {
    actor: Pick<Actor, 'id' | 'login'>;
    action: BulkAction;
    note: string;
    filter: DeadLetterFilter;
    asOfMs: number;
    limit: number;
  }): Promise<{ jobId: number; itemCount: number }>;
  /**
   * Creates a PREVIEWED REQUEUE job and freezes, with one INSERT ... SELECT, those of the
   * receipts that are retry-scheduled and unleased at `asOfMs`, each with its row_version.
   */
  createRequeuePreview(input: {
    actor: Pick<Actor, 'id' | 'login'>;
    note: string;
    receiptIds: readonly string[];
    asOfMs: number;
  }): Promise<{ jobId: number; itemCount: number }>;
  sample(jobId: number, limit: number): Promise<BulkReplaySampleItem[]>;
  /** The first frozen items of a REQUEUE job as they stand now, in receipt order. */
  requeueSample(jobId: number, limit: number): Promise<BulkRequeueSampleItem[]>;
  job(jobId: number): Promise<BulkReplayJob | null>;
  /** The job, locked (FOR UPDATE) so no batch of it runs until this transaction ends. */
  lockJob(jobId: number): Promise<BulkReplayJob | null>;
  /**
   * The oldest RUNNING job that no other instance holds a lease on and no other worker
   * is running a batch of (FOR UPDATE SKIP LOCKED), locked, and leased to `worker` for
   * `leaseMs` from now. `previousInstance` is the instance whose lease ran out when this
   * call took the job over from it, else null.
   */
  lockNextRunningJob(worker: BulkWorkerLease): Promise<(BulkReplayJob & { previousInstance: string | null }) | null>;
  /**
   * The user's current role and disabled flag, their row share-locked until the
   * transaction ends so a disable or role change waits for the batch in flight; null
   * when no such user exists.
   */
  lockStarterStanding(userId: string): Promise<BulkJobStarterStanding | null>;
  /**
   * The job stays `worker`'s for `leaseMs` from now: run as a batch commits, so a long batch never outlives its lease.
   */
  renewLease(jobId: number, worker: BulkWorkerLease): Promise<void>;
  markStarted(jobId: number, actor: Pick<Actor, 'id' | 'login' | 'role'>): Promise<void>;
  /** CANCELLED, and every unprocessed item marked `cancelled`; returns how many. */
  markCancelled(jobId: number): Promise<number>;
  markCompleted(jobId: number): Promise<void>;
  /** `rowVersion` is the frozen row_version of a REQUEUE item, null for dead letters. */
  pendingItems(
    jobId: number,
    limit: number,
  ): Promise<{ receiptId: string; recordedAtMs: number; rowVersion: number | null }[]>;
  hasPendingItems(jobId: number): Promise<boolean>;
  /** Writes each item's result and advances the job's processed count by as many. */
  recordResults(jobId: number, results: readonly { receiptId: string; result: BulkReplayItemResult }[]): Promise<void>;
  counts(jobId: number): Promise<BulkReplayCounts>;
  /** Items in receipt order after `after` (keyset), optionally of one result (`pending` = none yet). */
  items(
    jobId: number,
    page: { after?: string; result?: BulkReplayItemOutcome | 'pending'; limit: number },
  ): Promise<BulkReplayItemView[]>;
}
