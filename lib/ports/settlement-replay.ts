import type { Actor } from '../domain/actor';
import type { AuditLog } from './audit-log';
import type { BulkReplayStore } from './bulk-replay';

/** A dead letter as `settle.dead_letters` holds it. */
export interface DeadLetter {
  receiptId: string;
  finalizedAt: number;
  attempts: number;
  reason: string;
  canonicalJson: string;
  recordedAtMs: number;
}

/** One row of `keel.settlement_replay`: the proof a dead letter was replayed, and by whom. */
export interface ReplayRecord {
  receiptId: string;
  operationId: string;
  priorAttempts: number;
  priorReason: string;
  actorLogin: string;
  note: string;
  bulkJob: number | null;
  at: Date;
}

/** A queued attempt as the requeue action sees it. */
export interface QueuedAttempt {
  receiptId: string;
  workKind: 'pending_observation' | 'retry_scheduled';
  attempts: number;
  nextVisibleAtMs: number;
  rowVersion: number;
  /** The lease deadline, or null when no lease is held. The owner and token never leave the adapter. */
  leaseUntilMs: number | null;
}

export interface ReplayContext {
  actor: Pick<Actor, 'id' | 'login'>;
  note: string;
  nowMs: number;
  bulkJob: number | null;
}

/** An APPLIED audit event carrying an operation id: what a repeated submit returns. */
export interface AppliedOperation {
  action: string;
  targetId: string;
  after: unknown;
}

/**
 * The console's side of the settlement store: dead-letter replay, discard and requeue.
 * Bound to one transaction; the service decides, these methods lock, read and write.
 */
export interface DeadLetterReplayStore {
  /** The database server's clock, epoch ms: the console's "now" for every queue write. */
  serverNowMs(): Promise<number>;
  /** Serializes every request carrying this operation id until the transaction ends. */
  lockOperation(operationId: string): Promise<void>;
  findAppliedOperation(operationId: string): Promise<AppliedOperation | null>;
  findReplays(operationIds: readonly string[]): Promise<ReplayRecord[]>;
  /** Locks (FOR UPDATE, in receipt order) and returns the dead letters that exist. */
  lockDeadLetters(receiptIds: readonly string[]): Promise<DeadLetter[]>;
  /**
   * Replays locked dead letters: deletes each, queues a fresh attempt (pending
   * observation, attempts 0, visible now), records the replay and a `replayed` event.
   */
  replay(
    items: readonly { deadLetter: DeadLetter; operationId: string }[],
    context: ReplayContext,
  ): Promise<ReplayRecord[]>;
  /** Deletes a locked dead letter and writes a `discarded` event. */
  discard(deadLetter: DeadLetter, nowMs: number): Promise<void>;
  lockAttempt(receiptId: string): Promise<QueuedAttempt | null>;
  /**
   * Makes a retry due now (never later than it already was), guarded by row_version,
   * and clears a lapsed lease; null when the row changed or a live lease holds it.
   * Writes a `requeued` event.
   */
  requeue(receiptId: string, expectedRowVersion: number, nowMs: number): Promise<QueuedAttempt | null>;
}

export interface SettlementReplayPorts {
  replays: DeadLetterReplayStore;
  bulk: BulkReplayStore;
  audit: AuditLog;
}
