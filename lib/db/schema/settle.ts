import { sql } from 'drizzle-orm';
import { bigint, boolean, check, index, integer, pgSchema, text } from 'drizzle-orm/pg-core';
import { bytea } from './types';

/**
 * Keel's Postgres settlement store (docs/design.md#settlement-store-schema), shaped like the runtime's SQLite store.
 */
export const settle = pgSchema('settle');

export const settleAttempts = settle.table(
  'attempts',
  {
    receiptId: text('receipt_id').primaryKey(),
    finalizedAt: bigint('finalized_at', { mode: 'number' }).notNull(),
    workKind: text('work_kind').notNull(),
    attempts: integer('attempts').notNull().default(0),
    nextVisibleAtMs: bigint('next_visible_at_ms', { mode: 'number' }).notNull(),
    rowVersion: bigint('row_version', { mode: 'number' }).notNull().default(0),
    leaseOwner: text('lease_owner'),
    leaseToken: text('lease_token'),
    leaseUntilMs: bigint('lease_until_ms', { mode: 'number' }),
    reasonCode: text('reason_code'),
    reasonDetailSha256: bytea('reason_detail_sha256'),
    updatedAtMs: bigint('updated_at_ms', { mode: 'number' }).notNull(),
  },
  (t) => [
    check('attempts_work_kind', sql`${t.workKind} in ('pending_observation', 'retry_scheduled')`),
    check('attempts_attempts_nonnegative', sql`${t.attempts} >= 0`),
    check('attempts_row_version_nonnegative', sql`${t.rowVersion} >= 0`),
    // A lease is one fact: owner, token and expiry are written and cleared together.
    check(
      'attempts_lease_complete',
      sql`(${t.leaseOwner} is null and ${t.leaseToken} is null and ${t.leaseUntilMs} is null)
        or (${t.leaseOwner} is not null and ${t.leaseToken} is not null and ${t.leaseUntilMs} is not null)`,
    ),
    check(
      'attempts_detail_sha256_length',
      sql`${t.reasonDetailSha256} is null or octet_length(${t.reasonDetailSha256}) = 32`,
    ),
    // No index may cover a column a claim writes (the lease columns, row_version,
    // updated_at_ms), keys, INCLUDE or predicate: claims stay HOT updates, with room
    // from the table's fillfactor 50 (drizzle/0017; drizzle has no table option for it).
    // Due order for claimDue and the queue page.
    index('attempts_due_idx').on(t.nextVisibleAtMs, t.receiptId),
    // Retry-scheduled rows only (the metric sampler's count): pending rows pay no entry.
    index('attempts_retry_due_idx').on(t.nextVisibleAtMs, t.receiptId).where(sql`${t.workKind} = 'retry_scheduled'`),
    index('attempts_reason_idx').on(t.reasonCode, t.nextVisibleAtMs, t.receiptId),
    // The queue page's attempts filter, in due order.
    index('attempts_attempts_due_idx').on(t.attempts, t.nextVisibleAtMs, t.receiptId),
    // Receipt id prefix search (`receipt_id ^@ prefix`): pattern ops, so it serves any collation.
    // With the due time, the due and retry counts under a prefix read no heap (drizzle/0020).
    index('attempts_receipt_prefix_idx').on(t.receiptId.op('text_pattern_ops'), t.nextVisibleAtMs),
  ],
);

/**
 * One row per claim statement that leased at least one attempt (drizzle/0019): the
 * lease's deadline and the claimed rows' first and last keys in due order
 * `(next_visible_at_ms, receipt_id)`. Every live lease lies inside the range of a grant
 * with its deadline, so the queue's leased rows are read from range scans of the due
 * index instead of a scan of the table: no index on attempts covers a lease column
 * (claims stay HOT updates, 0017). Expired grants are deleted by the metric sampler.
 */
export const settleLeaseGrants = settle.table(
  'lease_grants',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    leaseUntilMs: bigint('lease_until_ms', { mode: 'number' }).notNull(),
    loNextVisibleAtMs: bigint('lo_next_visible_at_ms', { mode: 'number' }).notNull(),
    loReceiptId: text('lo_receipt_id').notNull(),
    hiNextVisibleAtMs: bigint('hi_next_visible_at_ms', { mode: 'number' }).notNull(),
    hiReceiptId: text('hi_receipt_id').notNull(),
  },
  (t) => [index('lease_grants_until_idx').on(t.leaseUntilMs)],
);

export const settleDeadLetters = settle.table(
  'dead_letters',
  {
    receiptId: text('receipt_id').primaryKey(),
    finalizedAt: bigint('finalized_at', { mode: 'number' }).notNull(),
    attempts: integer('attempts').notNull(),
    reason: text('reason').notNull(),
    canonicalJson: text('canonical_json').notNull(),
    recordedAtMs: bigint('recorded_at_ms', { mode: 'number' }).notNull(),
  },
  (t) => [
    check('dead_letters_attempts_nonnegative', sql`${t.attempts} >= 0`),
    // Each order's columns, then the other filters' (0018): counts are index-only scans.
    index('dead_letters_recorded_idx').on(t.recordedAtMs, t.receiptId, t.reason, t.attempts),
    index('dead_letters_reason_idx').on(t.reason, t.recordedAtMs, t.receiptId, t.attempts),
    index('dead_letters_attempts_idx').on(t.attempts, t.recordedAtMs, t.receiptId, t.reason),
    // The groups' per-reason counts under an attempts filter (lib/queries/settlements.ts, countByReason).
    index('dead_letters_reason_attempts_idx').on(t.reason, t.attempts, t.recordedAtMs),
    index('dead_letters_receipt_prefix_idx').on(
      t.receiptId.op('text_pattern_ops'),
      t.recordedAtMs,
      t.reason,
      t.attempts,
    ),
  ],
);

/**
 * Where each receipt is: one row per receipt in attempts or dead_letters, kept by
 * triggers on both tables (drizzle/0007). The primary key is the one-place rule
 * itself: a second place collides on the key, and a concurrent transaction claiming
 * the same receipt waits on it, with no per-row lock that could fill the lock table.
 */
export const settleReceiptPlace = settle.table(
  'receipt_place',
  {
    receiptId: text('receipt_id').primaryKey(),
    place: text('place').notNull(),
  },
  (t) => [check('receipt_place_place', sql`${t.place} in ('queued', 'dead_lettered')`)],
);

export const settleStoreBinding = settle.table(
  'store_binding',
  {
    singleton: boolean('singleton').primaryKey().default(true),
    binding: bytea('binding').notNull(),
  },
  (t) => [
    check('store_binding_singleton', sql`${t.singleton}`),
    check('store_binding_length', sql`octet_length(${t.binding}) = 32`),
  ],
);

export type SettleAttemptRow = typeof settleAttempts.$inferSelect;
export type SettleDeadLetterRow = typeof settleDeadLetters.$inferSelect;
export type SettleLeaseGrantRow = typeof settleLeaseGrants.$inferSelect;
