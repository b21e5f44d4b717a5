import 'server-only';
import { eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';
import { obJobExecution } from '../db/schema/oxide-batch';
import { ACTIVE_STATUSES, isActive, isBatchStatus } from '../domain/batch-status';
import { err, ok } from '../domain/result';
import type { BatchExecutionCommands, StopRequestError } from '../ports/batch-execution-commands';

const epochMs = (column: string) =>
  sql.raw(`round(extract(epoch from date_trunc('milliseconds', ${column})) * 1000)::bigint`);
const activeList = sql.raw(ACTIVE_STATUSES.map((status) => `'${status}'`).join(', '));

interface DecisionRow extends Record<string, unknown> {
  id: number;
  version: number;
  decision_id: number;
  request_id: number;
  decided_at_ms: number;
}

interface StopRow extends Record<string, unknown> {
  status: string;
  already_requested: boolean;
  updated_id: number | null;
  version: number | null;
  requested_at_ms: number | null;
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
        with now_at as (select clock_timestamp() as at),
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

    async requestStop(executionId, requestedBy) {
      // A stop request is a durable change the runtime must notice, so it moves
      // updated_at and the version like any other write to the row.
      const { rows } = await db.execute<StopRow>(sql`
        with now_at as (select clock_timestamp() as at),
        target as (
          select id, status, stop_requested_at from oxide_batch.ob_job_execution
          where id = ${executionId} for update
        ),
        upd as (
          update oxide_batch.ob_job_execution e
          set stop_requested_at = now_at.at, stop_requested_by = ${requestedBy},
              updated_at = now_at.at, version = e.version + 1
          from target, now_at
          where e.id = target.id and target.status in (${activeList}) and target.stop_requested_at is null
          returning e.id, e.version
        )
        select target.status, target.stop_requested_at is not null as already_requested,
               upd.id as updated_id, upd.version, ${epochMs('now_at.at')} as requested_at_ms
        from target cross join now_at left join upd on upd.id = target.id`);
      const [row] = rows;
      if (!row) return err({ kind: 'ExecutionNotFound' } satisfies StopRequestError);
      if (row.updated_id !== null && row.version !== null) {
        return ok({ executionId, version: Number(row.version), requestedAtMs: Number(row.requested_at_ms) });
      }
      if (!isBatchStatus(row.status)) return err({ kind: 'ExecutionNotFound' });
      if (!isActive(row.status)) return err({ kind: 'NotActive', status: row.status });
      return err({ kind: 'StopAlreadyRequested' });
    },
  };
}
