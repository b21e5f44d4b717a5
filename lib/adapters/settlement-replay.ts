import 'server-only';
import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';
import { unleasedAt } from '../db/sql/queue-state';
import type {
  AppliedOperation,
  DeadLetter,
  DeadLetterReplayStore,
  QueuedAttempt,
  ReplayRecord,
  SettlementReplayPorts,
} from '../ports/settlement-replay';
import type { UnitOfWork } from '../ports/unit-of-work';
import { postgresUnitOfWork } from './unit-of-work';
import { postgresAuditLog } from './audit-log';
import { postgresBulkReplayStore } from './bulk-replay';

/** Query rows typed by a port's interface (execute wants an index signature). */
type Row<T> = T & Record<string, unknown>;

const DEAD_LETTER_COLUMNS = sql.raw(`receipt_id as "receiptId", finalized_at as "finalizedAt", attempts, reason,
  canonical_json as "canonicalJson", recorded_at_ms as "recordedAtMs"`);
const REPLAY_COLUMNS =
  sql.raw(`receipt_id as "receiptId", operation_id as "operationId", prior_attempts as "priorAttempts",
  prior_reason as "priorReason", actor_login as "actorLogin", note, bulk_job as "bulkJob", at`);
const ATTEMPT_COLUMNS = sql.raw(`receipt_id as "receiptId", work_kind as "workKind", attempts,
  next_visible_at_ms as "nextVisibleAtMs", row_version as "rowVersion", lease_until_ms as "leaseUntilMs"`);

const toReplayRecord = (row: ReplayRecord): ReplayRecord => ({ ...row, at: new Date(row.at) });

export function postgresDeadLetterReplayStore(db: DbOrTx): DeadLetterReplayStore {
  return {
    async serverNowMs() {
      const result = await db.execute<{ nowMs: number }>(
        sql`select (extract(epoch from clock_timestamp()) * 1000)::bigint as "nowMs"`,
      );
      return result.rows[0]!.nowMs;
    },

    async lockOperation(operationId) {
      await db.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`keel.operation:${operationId}`}, 0))`);
    },

    async findAppliedOperation(operationId) {
      const result = await db.execute<Row<AppliedOperation>>(sql`
        select action, target_id as "targetId", after from keel.audit_event
        where operation_id = ${operationId} and outcome = 'APPLIED'
        order by id limit 1`);
      return result.rows[0] ?? null;
    },

    async findReplays(operationIds) {
      if (operationIds.length === 0) return [];
      const result = await db.execute<Row<ReplayRecord>>(sql`
        select ${REPLAY_COLUMNS} from keel.settlement_replay
        where operation_id = any(${sql.param(operationIds)}::text[])`);
      return result.rows.map(toReplayRecord);
    },

    async lockDeadLetters(receiptIds) {
      if (receiptIds.length === 0) return [];
      // One lock order for everyone (single replays, discards, bulk batches), so two
      // transactions locking overlapping sets cannot deadlock.
      const result = await db.execute<Row<DeadLetter>>(sql`
        select ${DEAD_LETTER_COLUMNS} from settle.dead_letters
        where receipt_id = any(${sql.param(receiptIds)}::text[])
        order by receipt_id
        for update`);
      return result.rows;
    },

    async replay(items, { actor, note, nowMs, bulkJob }) {
      if (items.length === 0) return [];
      const receipts = items.map((i) => i.deadLetter.receiptId);
      // Two statements, not one: the one-place trigger on attempts must see the dead
      // letters already gone, which only a later statement in the transaction does.
      const removed = await db.execute(
        sql`delete from settle.dead_letters where receipt_id = any(${sql.param(receipts)}::text[])`,
      );
      if (removed.rowCount !== items.length) throw new Error('replay: a dead letter was not locked before replaying');
      await db.execute(sql`
        insert into settle.attempts (receipt_id, finalized_at, work_kind, attempts, next_visible_at_ms, row_version,
        updated_at_ms)
        select receipt_id, finalized_at, 'pending_observation', 0, ${nowMs}::bigint, 0, ${nowMs}::bigint
        from unnest(${sql.param(receipts)}::text[], ${sql.param(items.map((i) => i.deadLetter.finalizedAt))}::bigint[])
          as queued(receipt_id, finalized_at)`);
      const result = await db.execute<Row<ReplayRecord>>(sql`
        with replayed as (
          insert into keel.settlement_replay (receipt_id, prior_attempts, prior_reason, actor_id, actor_login, note,
          operation_id, bulk_job, at)
          select receipt_id, prior_attempts, prior_reason, ${actor.id}, ${actor.login}, ${note}, operation_id,
          ${bulkJob}::bigint,
                 to_timestamp(${nowMs}::bigint / 1000.0)
          from unnest(${sql.param(receipts)}::text[], ${sql.param(items.map((i) => i.deadLetter.attempts))}::int[],
                      ${sql.param(items.map((i) => i.deadLetter.reason))}::text[],
                      ${sql.param(items.map((i) => i.operationId))}::text[])
            as r(receipt_id, prior_attempts, prior_reason, operation_id)
          returning ${REPLAY_COLUMNS}
        ),
        logged as (
          insert into keel.settlement_event (receipt_id, kind, attempt, reason_code, at_ms)
          select "receiptId", 'replayed', "priorAttempts", "priorReason", ${nowMs}::bigint from replayed
        )
        select * from replayed order by "receiptId"`);
      return result.rows.map(toReplayRecord);
    },

    async discard(deadLetter, nowMs) {
      await db.execute(sql`
        with gone as (delete from settle.dead_letters where receipt_id = ${deadLetter.receiptId}
        returning receipt_id, attempts, reason)
        insert into keel.settlement_event (receipt_id, kind, attempt, reason_code, at_ms)
        select receipt_id, 'discarded', attempts, reason, ${nowMs}::bigint from gone`);
    },

    async lockAttempt(receiptId) {
      const result = await db.execute<Row<QueuedAttempt>>(sql`
        select ${ATTEMPT_COLUMNS} from settle.attempts where receipt_id = ${receiptId} for update`);
      return result.rows[0] ?? null;
    },

    async requeue(receiptId, expectedRowVersion, nowMs) {
      // least(): a retry already due keeps its place in the due order. A row under a live
      // lease is not moved (the services refuse it first): its key must stay inside its
      // lease grant's range (lib/db/sql/lease-grants.ts). A lapsed lease is cleared with
      // the move, so no clock, however late, sees a lease on a key its grant does not cover.
      const result = await db.execute<Row<QueuedAttempt>>(sql`
        with moved as (
          update settle.attempts
          set next_visible_at_ms = least(next_visible_at_ms, ${nowMs}::bigint), row_version = row_version + 1,
              lease_owner = null, lease_token = null, lease_until_ms = null,
              updated_at_ms = ${nowMs}::bigint
          where receipt_id = ${receiptId} and row_version = ${expectedRowVersion}::bigint and ${unleasedAt(nowMs)}
          returning ${ATTEMPT_COLUMNS}
        ),
        -- The row as it stood (the statement's snapshot): a lapsed claim it held ended with no outcome, so it is
        -- written as its own claimed event, before the requeue (docs/design.md#settlement-history).
        logged as (
          insert into keel.settlement_event (receipt_id, kind, attempt, reason_code, at_ms)
          select e.receipt_id, e.kind, e.attempt, e.reason_code, e.at_ms
          from moved m join settle.attempts a on a.receipt_id = m."receiptId",
          lateral (values (1, a.receipt_id, 'claimed', a.attempts, null::text, a.updated_at_ms),
                          (2, a.receipt_id, 'requeued', m.attempts, a.reason_code, ${nowMs}::bigint))
            as e(ord, receipt_id, kind, attempt, reason_code, at_ms)
          where e.kind = 'requeued' or a.lease_owner is not null
          order by e.ord
        )
        select * from moved`);
      return result.rows[0] ?? null;
    },
  };
}

/** The settlement services' ports (replay, discard, requeue, bulk replay) over one transaction. */
export function postgresSettlementUnitOfWork(db: DbOrTx): UnitOfWork<SettlementReplayPorts> {
  return postgresUnitOfWork(db, (tx) => ({
    replays: postgresDeadLetterReplayStore(tx),
    bulk: postgresBulkReplayStore(tx),
    audit: postgresAuditLog(tx),
  }));
}
