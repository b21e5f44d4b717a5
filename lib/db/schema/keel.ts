import { sql } from 'drizzle-orm';
import {
  bigint,
  check,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgSchema,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { PROPOSAL_STATUSES } from '../../domain/proposal-status';
import { RATE_METRICS } from '../../domain/rates';
import { BULK_REPLAY_STATUSES } from '../../domain/settlement-vocabulary';
import { textList } from '../sql/text-list';
import { bytea } from './types';

/** Keel's own schema (docs/design.md#keel-schema). Auth tables live beside these, in auth.ts. */
export const keel = pgSchema('keel');

const createdAt = () => timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();

export const durableCheckpoint = keel.table(
  'durable_checkpoint',
  {
    executionId: text('execution_id').primaryKey(),
    checkpoint: jsonb('checkpoint').notNull(),
    authenticationTag: text('authentication_tag').notNull(),
    leaseOwner: text('lease_owner').notNull(),
    fencingToken: bigint('fencing_token', { mode: 'number' }).notNull(),
    leaseExpiresAtMs: bigint('lease_expires_at_ms', { mode: 'number' }).notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [
    check('durable_checkpoint_token_positive', sql`${t.fencingToken} > 0`),
    index('durable_checkpoint_expiry_idx').on(t.leaseExpiresAtMs, t.executionId),
  ],
);

export const recoveryProposal = keel.table(
  'recovery_proposal',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    targetKind: text('target_kind').notNull(),
    targetId: text('target_id').notNull(),
    /** TAKEOVER (a recovery decision or a lease handover) or ABANDON (the runtime's ABANDON request). */
    kind: text('kind').notNull().default('TAKEOVER'),
    evidenceDigest: bytea('evidence_digest').notNull(),
    evidence: jsonb('evidence').notNull(),
    expectedVersion: bigint('expected_version', { mode: 'number' }),
    expectedFencingToken: bigint('expected_fencing_token', { mode: 'number' }),
    successorOwner: text('successor_owner'),
    proposerId: text('proposer_id').notNull(),
    proposerLogin: text('proposer_login').notNull(),
    proposerNote: text('proposer_note'),
    createdAt: createdAt(),
    status: text('status').notNull().default('PENDING'),
    deciderId: text('decider_id'),
    deciderLogin: text('decider_login'),
    decidedAt: timestamp('decided_at', { withTimezone: true, mode: 'date' }),
    resultingStatus: text('resulting_status'),
    failureCategory: text('failure_category'),
    reasonCode: text('reason_code'),
    reason: text('reason'),
    waitOwner: text('wait_owner').notNull(),
    waitDeadline: timestamp('wait_deadline', { withTimezone: true, mode: 'date' }).notNull(),
    waitCancellationId: text('wait_cancellation_id').notNull(),
  },
  (t) => [
    check('recovery_proposal_target_kind', sql`${t.targetKind} in ('batch', 'orchestration')`),
    // Only a batch execution can be abandoned.
    check(
      'recovery_proposal_kind',
      sql`${t.kind} = 'TAKEOVER' or (${t.kind} = 'ABANDON' and ${t.targetKind} = 'batch')`,
    ),
    check('recovery_proposal_status', sql`${t.status} in (${textList(PROPOSAL_STATUSES)})`),
    check('recovery_proposal_digest_length', sql`octet_length(${t.evidenceDigest}) = 32`),
    check('recovery_proposal_decided_shape', sql`(${t.status} = 'PENDING') = (${t.decidedAt} is null)`),
    // A batch proposal binds a version; an orchestration proposal a fencing token and its successor.
    check(
      'recovery_proposal_target_shape',
      // Pieces of one statement: the text drizzle-kit compares with the last snapshot is unchanged.
      sql.join([
        sql`(${t.targetKind} = 'batch' and ${t.expectedVersion} is not null`,
        sql` and ${t.expectedFencingToken} is null and ${t.successorOwner} is null)\n        or (`,
        sql`${t.targetKind} = 'orchestration' and ${t.expectedVersion} is null`,
        sql` and ${t.expectedFencingToken} is not null and ${t.successorOwner} is not null)`,
      ]),
    ),
    // One open question per target: a second request returns the pending one.
    uniqueIndex('recovery_proposal_one_pending').on(t.targetKind, t.targetId).where(sql`${t.status} = 'PENDING'`),
    // The deadline sweep: pending proposals in deadline order.
    index('recovery_proposal_pending_deadline_idx').on(t.waitDeadline, t.id).where(sql`${t.status} = 'PENDING'`),
    index('recovery_proposal_status_idx').on(t.status, t.createdAt, t.id),
    index('recovery_proposal_target_idx').on(t.targetKind, t.targetId, t.createdAt),
    // Search by evidence digest or a hex prefix of it: a range of this index (lib/queries/search.ts).
    index('recovery_proposal_digest_idx').on(t.evidenceDigest),
  ],
);

export const auditEvent = keel.table(
  'audit_event',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    at: timestamp('at', { withTimezone: true, mode: 'date' }).notNull().default(sql`clock_timestamp()`),
    actorId: text('actor_id'),
    actorLogin: text('actor_login').notNull(),
    actorRole: text('actor_role').notNull(),
    action: text('action').notNull(),
    targetKind: text('target_kind').notNull(),
    targetId: text('target_id').notNull(),
    reason: text('reason'),
    before: jsonb('before'),
    after: jsonb('after'),
    digest: text('digest'),
    operationId: text('operation_id'),
    outcome: text('outcome').notNull(),
    code: text('code'),
    requestId: text('request_id'),
  },
  (t) => [
    check('audit_event_outcome', sql`${t.outcome} in ('APPLIED', 'REFUSED')`),
    check('audit_event_code_shape', sql`(${t.outcome} = 'REFUSED') = (${t.code} is not null)`),
    index('audit_event_at_idx').on(t.at, t.id),
    index('audit_event_actor_idx').on(t.actorLogin, t.at, t.id),
    index('audit_event_action_idx').on(t.action, t.at, t.id),
    index('audit_event_target_idx').on(t.targetKind, t.targetId, t.at, t.id),
    index('audit_event_outcome_idx').on(t.outcome, t.at, t.id),
    index('audit_event_operation_idx').on(t.operationId),
  ],
);

/** The kinds keel.settlement_event's CHECK allows, in the order the migrations spell them. */
const EVENT_KINDS_CHECKED = [
  'claimed',
  'retry_scheduled',
  'dead_lettered',
  'replayed',
  'finished',
  'discarded',
  'requeued',
];

export const settlementEvent = keel.table(
  'settlement_event',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    receiptId: text('receipt_id').notNull(),
    kind: text('kind').notNull(),
    attempt: integer('attempt').notNull(),
    reasonCode: text('reason_code'),
    atMs: bigint('at_ms', { mode: 'number' }).notNull(),
    // An outcome's claim time (drizzle/0028): a claim is written with the outcome it led to, and a claim that ends
    // with none as its own `claimed` event when the receipt is claimed again or requeued (docs/design.md).
    claimedAtMs: bigint('claimed_at_ms', { mode: 'number' }),
  },
  (t) => [
    check('settlement_event_kind', sql`${t.kind} in (${textList(EVENT_KINDS_CHECKED)})`),
    check(
      'settlement_event_claimed_at_outcome',
      sql`${t.claimedAtMs} is null or ${t.kind} in ('finished', 'retry_scheduled', 'dead_lettered')`,
    ),
    index('settlement_event_receipt_idx').on(t.receiptId, t.id),
    // The metric sampler's recent retry count; claimed and finished events pay no entry.
    index('settlement_event_retry_at_idx').on(t.atMs).where(sql`${t.kind} = 'retry_scheduled'`),
    // Every dead-lettering by reason, for the metric sampler's dead-lettered counter (drizzle/0022):
    // history rows are never deleted, so the count only grows, whatever is replayed or discarded.
    index('settlement_event_dead_lettered_idx').on(t.reasonCode).where(sql`${t.kind} = 'dead_lettered'`),
    // The rate rollup's minutes of finished, retried and dead-lettered events (lib/workers/rate-rollup.ts). History
    // is appended in time order, so a BRIN range finds a minute's pages; it costs an insert next to nothing.
    index('settlement_event_at_brin_idx').using('brin', t.atMs).with({ autosummarize: true }),
  ],
);

export const metricSample = keel.table(
  'metric_sample',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    sampledAt: timestamp('sampled_at', { withTimezone: true, mode: 'date' }).notNull(),
    metric: text('metric').notNull(),
    label: text('label').notNull().default(''),
    value: doublePrecision('value').notNull(),
  },
  (t) => [index('metric_sample_metric_idx').on(t.metric, t.sampledAt), index('metric_sample_at_idx').on(t.sampledAt)],
);

/**
 * Counts per closed minute of each rate (lib/domain/rates.ts), by reason code or job name; a
 * minute with no row counted nothing. Written only by the rate rollup, kept 48 h.
 */
export const rateMinute = keel.table(
  'rate_minute',
  {
    metric: text('metric').notNull(),
    dimension: text('dimension').notNull().default(''),
    minute: timestamp('minute', { withTimezone: true, mode: 'date' }).notNull(),
    count: integer('count').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.metric, t.minute, t.dimension] }),
    check('rate_minute_metric', sql`${t.metric} in (${textList(RATE_METRICS)})`),
    check('rate_minute_count', sql`${t.count} > 0`),
    index('rate_minute_minute_idx').on(t.minute),
  ],
);

/** The same counts per hour (UTC hours), summed from `rate_minute`, for ranges over a day; kept 30 d. */
export const rateHour = keel.table(
  'rate_hour',
  {
    metric: text('metric').notNull(),
    dimension: text('dimension').notNull().default(''),
    hour: timestamp('hour', { withTimezone: true, mode: 'date' }).notNull(),
    count: integer('count').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.metric, t.hour, t.dimension] }),
    check('rate_hour_metric', sql`${t.metric} in (${textList(RATE_METRICS)})`),
    check('rate_hour_count', sql`${t.count} > 0`),
    index('rate_hour_hour_idx').on(t.hour),
  ],
);

export const bulkReplay = keel.table(
  'bulk_replay',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    createdById: text('created_by_id').notNull(),
    createdByLogin: text('created_by_login').notNull(),
    // Who pressed start: the worker replays (and audits each item) on that person's behalf.
    startedById: text('started_by_id'),
    startedByLogin: text('started_by_login'),
    startedByRole: text('started_by_role'),
    note: text('note').notNull(),
    filter: jsonb('filter').notNull(),
    /**
     * REPLAY queues each frozen dead letter again; DISCARD deletes each (its JSON kept in the audit log);
     * REQUEUE makes each frozen retry-scheduled settlement due now.
     */
    action: text('action').notNull().default('REPLAY'),
    status: text('status').notNull().default('PREVIEWED'),
    itemCount: integer('item_count').notNull(),
    processedCount: integer('processed_count').notNull().default(0),
    createdAt: createdAt(),
    startedAt: timestamp('started_at', { withTimezone: true, mode: 'date' }),
    finishedAt: timestamp('finished_at', { withTimezone: true, mode: 'date' }),
    cancelledAt: timestamp('cancelled_at', { withTimezone: true, mode: 'date' }),
    /**
     * The Keel instance (KEEL_INSTANCE_ID) working a RUNNING job, and until when it holds
     * it: each batch renews the lease, and another instance takes the job only once the
     * lease has run out (its worker was killed or lost the database).
     */
    workerInstance: text('worker_instance'),
    workerLeaseUntil: timestamp('worker_lease_until', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    check('bulk_replay_status', sql`${t.status} in (${textList(BULK_REPLAY_STATUSES)})`),
    check('bulk_replay_action', sql`${t.action} in ('REPLAY', 'DISCARD', 'REQUEUE')`),
    check('bulk_replay_counts', sql`${t.processedCount} >= 0 and ${t.processedCount} <= ${t.itemCount}`),
    check(
      'bulk_replay_started_shape',
      sql`(${t.startedAt} is null) = (${t.startedById} is null)
        and (${t.startedById} is null) = (${t.startedByLogin} is null)
        and (${t.startedById} is null) = (${t.startedByRole} is null)`,
    ),
    check('bulk_replay_running_started', sql`${t.status} <> 'RUNNING' or ${t.startedAt} is not null`),
    index('bulk_replay_status_idx').on(t.status, t.id),
  ],
);

/** The results keel.bulk_replay_item's CHECK allows, in the order the migrations spell them. */
const ITEM_RESULTS_CHECKED = [
  'replayed',
  'discarded',
  'requeued',
  'already_replayed',
  'no_longer_dead_lettered',
  'no_longer_retry_scheduled',
  'changed_since_preview',
  'cancelled',
];

export const bulkReplayItem = keel.table(
  'bulk_replay_item',
  {
    job: bigint('job', { mode: 'number' })
      .notNull()
      .references(() => bulkReplay.id, { onDelete: 'cascade' }),
    receiptId: text('receipt_id').notNull(),
    /** A dead letter's recorded_at_ms; for REQUEUE, the retry's next_visible_at_ms at preview. */
    recordedAtMs: bigint('recorded_at_ms', { mode: 'number' }).notNull(),
    /** REQUEUE only: the settlement's row_version at preview; a requeue applies only to that version. */
    rowVersion: bigint('row_version', { mode: 'number' }),
    result: text('result'),
    processedAt: timestamp('processed_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    primaryKey({ columns: [t.job, t.receiptId] }),
    check('bulk_replay_item_result', sql`${t.result} is null or ${t.result} in (${textList(ITEM_RESULTS_CHECKED)})`),
    index('bulk_replay_item_pending_idx').on(t.job, t.receiptId).where(sql`${t.result} is null`),
    // Per-item results stay viewable, filtered by result and paged by receipt id.
    index('bulk_replay_item_result_idx').on(t.job, t.result, t.receiptId),
  ],
);

export const settlementReplay = keel.table(
  'settlement_replay',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    receiptId: text('receipt_id').notNull(),
    priorAttempts: integer('prior_attempts').notNull(),
    priorReason: text('prior_reason').notNull(),
    actorId: text('actor_id').notNull(),
    actorLogin: text('actor_login').notNull(),
    note: text('note').notNull(),
    operationId: text('operation_id').notNull(),
    bulkJob: bigint('bulk_job', { mode: 'number' }).references(() => bulkReplay.id),
    at: timestamp('at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [
    // The idempotency key: the same operation twice replays once.
    uniqueIndex('settlement_replay_operation_unique').on(t.operationId),
    index('settlement_replay_receipt_idx').on(t.receiptId, t.at),
  ],
);

export type RecoveryProposalRow = typeof recoveryProposal.$inferSelect;
export type AuditEventRow = typeof auditEvent.$inferSelect;
export type DurableCheckpointRow = typeof durableCheckpoint.$inferSelect;

/** Facts about this Keel installation, such as when demo data was seeded. */
export const keelMeta = keel.table('meta', {
  key: text('key').primaryKey(),
  value: jsonb('value').notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
});
