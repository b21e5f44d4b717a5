/**
 * The one rule for requeueing a settlement (docs/design.md#discard-and-requeue), shared by the single requeue
 * and each item of a bulk requeue: only a retry waiting for its time, still at the row
 * version the person saw (or the preview froze), and held by no live lease.
 */
export interface RequeueCandidate {
  workKind: 'pending_observation' | 'retry_scheduled';
  rowVersion: number;
  leaseUntilMs: number | null;
}

export type RequeueRefusal =
  /** The receipt has no queued attempt (finished, dead-lettered or never queued). */
  | { kind: 'not_queued' }
  /** Queued, but not waiting on a retry. */
  | { kind: 'not_retry_scheduled' }
  | { kind: 'changed'; rowVersion: number }
  | { kind: 'leased' };

/** Null when the requeue may go ahead at `nowMs`; otherwise why not. */
export function requeueRefusal(
  attempt: RequeueCandidate | null,
  expectedRowVersion: number,
  nowMs: number,
): RequeueRefusal | null {
  if (!attempt) return { kind: 'not_queued' };
  if (attempt.workKind !== 'retry_scheduled') return { kind: 'not_retry_scheduled' };
  if (attempt.rowVersion !== expectedRowVersion) return { kind: 'changed', rowVersion: attempt.rowVersion };
  if (attempt.leaseUntilMs !== null && attempt.leaseUntilMs > nowMs) return { kind: 'leased' };
  return null;
}

/** A bulk requeue item's result for a refusal: gone from the retries, or changed under the preview. */
export function bulkRequeueItemResult(refusal: RequeueRefusal): 'no_longer_retry_scheduled' | 'changed_since_preview' {
  return refusal.kind === 'not_queued' || refusal.kind === 'not_retry_scheduled'
    ? 'no_longer_retry_scheduled'
    : 'changed_since_preview';
}
