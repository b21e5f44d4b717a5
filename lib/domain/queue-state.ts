/**
 * Where a queued settlement attempt stands at an instant (docs/design.md#queue-states): a live lease
 * wins, then visibility. The overview, the queue view, the metrics and the claim all
 * use this rule; lib/db/sql/queue-state.ts is its SQL form, held equal by a test.
 */
export const QUEUE_STATES = ['due', 'leased', 'retry_scheduled'] as const;
export type QueueState = (typeof QUEUE_STATES)[number];

export interface QueueStateColumns {
  leaseOwner: string | null;
  leaseUntilMs: number | null;
  nextVisibleAtMs: number;
}

/** Held by a lease that outlives `nowMs`; the lease columns are all set or all null. */
export const isLeasedAt = (row: QueueStateColumns, nowMs: number): boolean =>
  row.leaseOwner !== null && row.leaseUntilMs !== null && row.leaseUntilMs > nowMs;

export const queueStateAt = (row: QueueStateColumns, nowMs: number): QueueState =>
  isLeasedAt(row, nowMs) ? 'leased' : row.nextVisibleAtMs > nowMs ? 'retry_scheduled' : 'due';
