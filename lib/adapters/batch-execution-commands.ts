import 'server-only';
import { eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';
import { obJobExecution } from '../db/schema/oxide-batch';
import { runtimeEpochMsText, WHOLE_MILLISECOND_NOW_TEXT } from '../db/runtime-time';
import { isBatchStatus } from '../domain/batch-status';
import { authorizationClassOf } from '../domain/operator-request';
import { err, ok } from '../domain/result';
import type { BatchExecutionCommands } from '../ports/batch-execution-commands';

const epochMs = (column: string) => sql.raw(runtimeEpochMsText(column));
/** An epoch-millisecond instant as the runtime binds one: `to_timestamp($ms / 1000.0)`. */
const msTimestamp = (ms: number) => sql`to_timestamp(${ms}::double precision / 1000.0)`;
/** A stored timestamp read as the runtime reads it (rounded ms) and written back as it writes it. */
const roundTrip = (column: 'started_at' | 'ended_at') =>
  sql.raw(`to_timestamp((${runtimeEpochMsText(column)})::double precision / 1000.0)`);

interface LockRow extends Record<string, unknown> {
  id: number;
  job_instance_id: number;
  status: string;
  version: number;
  stop_requested: boolean;
  has_decision: boolean;
  now_ms: number;
}

interface RequestRow extends Record<string, unknown> {
  id: number;
  operation_id: string;
  job_execution_id: number | null;
  request_digest: Buffer;
  outcome_class: string;
  rejection_code: string | null;
  prior_status: string | null;
  result_status: string | null;
  observed_version: number | null;
}

interface DecisionRow extends Record<string, unknown> {
  id: number;
  version: number;
  decision_id: number;
  request_id: number;
  decided_at_ms: number;
}

export function postgresBatchExecutionCommands(db: DbOrTx): BatchExecutionCommands {
  return {
    async lockExecution(executionId) {
      const rows = await db
        .select({ id: obJobExecution.id })
        .from(obJobExecution)
        .where(eq(obJobExecution.id, executionId))
        .for('update');
      return rows.length === 1;
    },

    async applyRecoveryDecision(write) {
      const failure = write.failure;
      // One statement, one instant: the status change, the decision and the operator
      // request share `at`, and the two inserts only happen when the guarded update did.
      const { rows } = await db.execute<DecisionRow>(sql`
        with now_at as (select date_trunc('milliseconds', clock_timestamp()) as at),
        upd as (
          update oxide_batch.ob_job_execution e
          set status = ${write.resultingStatus},
              failure_category = case when ${failure !== null} then ${failure?.category ?? null}::varchar
                                      else e.failure_category end,
              failure_id = case when ${failure !== null} then ${failure?.id ?? null}::bigint else e.failure_id end,
              ended_at = now_at.at,
              updated_at = now_at.at,
              version = e.version + 1
          from now_at
          where e.id = ${write.executionId} and e.version = ${write.observedVersion} and e.status = ${write.priorStatus}
          returning e.id, e.version, e.job_instance_id
        ),
        decision as (
          insert into oxide_batch.ob_recovery_decision (
            job_execution_id, execution_version, prior_status, resulting_status, reason_code,
            operator_reference, evidence_digest, decided_at)
          select upd.id, ${write.observedVersion}, ${write.priorStatus}, ${write.resultingStatus}, ${write.reasonCode},
                 ${write.operatorReference}, ${Buffer.from(write.evidenceDigestHex, 'hex')}, now_at.at
          from upd, now_at
          returning id
        ),
        request as (
          insert into oxide_batch.ob_operator_request (
            job_instance_id, job_execution_id, action, authorization_class, operation_id, actor_ref,
            reason_code, request_digest, observed_version, prior_status, result_status, outcome_class,
            rejection_code, requested_at)
          select upd.job_instance_id, upd.id, 'RECOVER', 'DESTRUCTIVE', ${write.operationId}, ${write.actorRef},
                 ${write.reasonCode}, ${Buffer.from(write.requestDigestHex, 'hex')}, ${write.observedVersion},
                 ${write.priorStatus}, ${write.resultingStatus}, 'APPLIED', null, now_at.at
          from upd, now_at
          returning id
        )
        select upd.id, upd.version, decision.id as decision_id, request.id as request_id,
               ${epochMs('now_at.at')} as decided_at_ms
        from upd, decision, request, now_at`);
      const [row] = rows;
      if (!row) return err({ kind: 'VersionConflict' });
      return ok({
        executionId: Number(row.id),
        version: Number(row.version),
        decisionId: Number(row.decision_id),
        operatorRequestId: Number(row.request_id),
        decidedAtMs: Number(row.decided_at_ms),
      });
    },

    async lockForOperatorRequest(executionId) {
      const { rows } = await db.execute<LockRow>(sql`
        select e.id, e.job_instance_id, e.status, e.version, e.stop_requested_at is not null as stop_requested,
               exists (select 1 from oxide_batch.ob_recovery_decision d
               where d.job_execution_id = e.id) as has_decision,
               ${sql.raw(runtimeEpochMsText(WHOLE_MILLISECOND_NOW_TEXT))} as now_ms
        from oxide_batch.ob_job_execution e
        where e.id = ${executionId}
        for update of e`);
      const [row] = rows;
      if (!row || !isBatchStatus(row.status)) return null;
      return {
        executionId: Number(row.id),
        jobInstanceId: Number(row.job_instance_id),
        status: row.status,
        version: Number(row.version),
        stopRequested: row.stop_requested === true,
        hasRecoveryDecision: row.has_decision === true,
        nowMs: Number(row.now_ms),
      };
    },

    async findOperatorRequest(action, operationId) {
      const { rows } = await db.execute<RequestRow>(sql`
        select id, action, operation_id, job_execution_id, request_digest, outcome_class, rejection_code,
               prior_status, result_status, observed_version
        from oxide_batch.ob_operator_request
        where action = ${action} and operation_id = ${operationId}`);
      const [row] = rows;
      if (!row) return null;
      return {
        id: Number(row.id),
        action,
        operationId: row.operation_id,
        jobExecutionId: row.job_execution_id === null ? null : Number(row.job_execution_id),
        requestDigestHex: Buffer.from(row.request_digest).toString('hex'),
        outcome: row.outcome_class === 'REJECTED' ? 'REJECTED' : 'APPLIED',
        rejectionCode: row.rejection_code,
        priorStatus: row.prior_status,
        resultStatus: row.result_status,
        observedVersion: row.observed_version === null ? null : Number(row.observed_version),
      };
    },

    async appendOperatorRequest(draft) {
      // The runtime's append_operator_request: the time goes in as epoch milliseconds.
      const { rows } = await db.execute<{ id: number }>(sql`
        insert into oxide_batch.ob_operator_request (
          job_instance_id, job_execution_id, action, authorization_class, operation_id, actor_ref,
          reason_code, request_digest, observed_version, prior_status, result_status, outcome_class,
          rejection_code, requested_at)
        values (${draft.jobInstanceId}, ${draft.jobExecutionId}, ${draft.action}, ${authorizationClassOf(draft.action)},
                ${draft.operationId}, ${draft.actorRef}, ${draft.reasonCode},
                ${Buffer.from(draft.requestDigestHex, 'hex')},
                ${draft.observedVersion}, ${draft.priorStatus}, ${draft.resultStatus}, ${draft.outcome},
                ${draft.rejectionCode},
                ${msTimestamp(draft.requestedAtMs)})
        returning id`);
      return { id: Number(rows[0]!.id) };
    },

    async requestStop(executionId, expectedVersion, actorRef, requestedAtMs) {
      // The runtime's request_execution_stop: no version bump, so the owner's next
      // compare-and-set still succeeds; updated_at never moves backwards.
      const { rows } = await db.execute<{ id: number }>(sql`
        update oxide_batch.ob_job_execution
        set stop_requested_at = ${msTimestamp(requestedAtMs)},
            stop_requested_by = ${actorRef},
            updated_at = greatest(updated_at, ${msTimestamp(requestedAtMs)})
        where id = ${executionId} and version = ${expectedVersion}
        returning id`);
      return rows.length === 1 ? ok(undefined) : err({ kind: 'VersionConflict' as const });
    },

    async abandon(executionId, expectedVersion, atMs) {
      // The runtime's update_execution after an ABANDONED transition: it writes back every
      // timestamp as the epoch milliseconds it read, keeps an earlier end, keeps exit code
      // and failure, and moves the version on.
      const { rows } = await db.execute<{ version: number }>(sql`
        update oxide_batch.ob_job_execution
        set status = 'ABANDONED',
            started_at = ${roundTrip('started_at')},
            ended_at = coalesce(${roundTrip('ended_at')}, ${msTimestamp(atMs)}),
            updated_at = ${msTimestamp(atMs)},
            version = version + 1
        where id = ${executionId} and version = ${expectedVersion}
        returning version`);
      const [row] = rows;
      return row ? ok({ version: Number(row.version) }) : err({ kind: 'VersionConflict' as const });
    },
  };
}
