import 'server-only';
import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';
import { ownerObservation } from '../db/sql/owner-observation';
import { staleExecution } from '../db/sql/stale-execution';
import { fromCanonicalJson, isRetryLimit, isRetryStateLimit, validateFor } from '../domain/fault-state';
import type { ExecutionDetail, StepDetail } from './execution-detail-types';
import { readOperatorHistory } from './operator-history';
import { describeFaultStateError } from './retry-keys';

export type { ExecutionDetail, StepDetail };

type Row = Record<string, unknown>;
const iso = (value: unknown) =>
  value === null || value === undefined ? null : new Date(value as string).toISOString();
const num = (value: unknown) => Number(value);

function limitsFor(manifest: unknown, logicalId: string): { retryLimit: number; stateLimit: number } | null {
  const steps = (manifest as { steps?: unknown })?.steps;
  if (!Array.isArray(steps)) return null;
  const policy = (
    steps.find((s) => (s as { logical_id?: unknown })?.logical_id === logicalId) as
      | { fault_policy?: Record<string, unknown> }
      | undefined
  )?.fault_policy;
  const retryLimit = policy?.retry_limit;
  const stateLimit = policy?.retry_state_limit;
  return isRetryLimit(retryLimit) && isRetryStateLimit(stateLimit) ? { retryLimit, stateLimit } : null;
}

function faultStateOf(row: Row, manifest: unknown): StepDetail['faultState'] {
  const envelope = fromCanonicalJson({
    formatId: row.fault_state_schema as string,
    formatVersion: num(row.fault_state_format),
    schemaVersion: num(row.fault_state_schema_version),
    checksum: row.fault_state_checksum as Buffer,
    payload: row.fault_state_payload,
  });
  if (!envelope.ok) return { kind: 'corrupt', error: describeFaultStateError(envelope.error) };
  if (envelope.value.entries.length === 0) return { kind: 'empty' };
  const limits = limitsFor(manifest, row.step_logical_id as string);
  if (limits) {
    const valid = validateFor(envelope.value, limits.retryLimit, limits.stateLimit, envelope.value.checkpoint);
    if (!valid.ok) return { kind: 'corrupt', error: describeFaultStateError(valid.error) };
  }
  return { kind: 'retained', entries: envelope.value.entries.length, limits };
}

/** Everything the execution page shows, read with the server's clock. The owner token is compared, never read. */
export async function readExecutionDetail(
  db: DbOrTx,
  executionId: number,
  context: { staleThresholdMs: number; ownerToken: Buffer },
): Promise<ExecutionDetail | null> {
  const head = await db.execute<Row>(sql`
    select e.id, e.job_instance_id, e.status, e.attempt, e.version, e.exit_code, e.failure_category,
           e.created_at, e.started_at, e.ended_at, e.updated_at, e.stop_requested_at, e.stop_requested_by, i.job_name,
           d.definition_revision, d.manifest, d.manifest->>'delivery_mode' as delivery_mode,
           ${ownerObservation(sql`e.owner_token`, context.ownerToken)} as owner,
           ${staleExecution(context.staleThresholdMs, 'e')} as stale,
           clock_timestamp() as server_now
    from oxide_batch.ob_job_execution e
    join oxide_batch.ob_job_instance i on i.id = e.job_instance_id
    join oxide_batch.ob_job_definition d on d.id = e.definition_id
    where e.id = ${executionId}`);
  const e = head.rows[0];
  if (!e) return null;
  const [steps, decisions, proposals, operatorRequests] = await Promise.all([
    db.execute<Row>(sql`
      select id, step_logical_id, status, read_count, processed_count, write_count, filter_count, commit_count,
      rollback_count,
             read_retry_count, process_retry_count, write_retry_count, read_skip_count, process_skip_count,
             write_skip_count,
             checkpoint_format, checkpoint_schema, checkpoint_schema_version,
             pg_column_size(checkpoint_payload) as checkpoint_len,
             fault_state_format, fault_state_schema, fault_state_schema_version, fault_state_payload,
             fault_state_checksum, updated_at
      from oxide_batch.ob_step_execution where job_execution_id = ${executionId} order by id`),
    db.execute<Row>(sql`
      select id, execution_version, prior_status, resulting_status, reason_code, operator_reference,
      encode(evidence_digest, 'hex') as digest, decided_at
      from oxide_batch.ob_recovery_decision where job_execution_id = ${executionId} order by id desc`),
    db.execute<Row>(sql`
      select id, status, proposer_login, decider_login, created_at, decided_at, resulting_status, reason
      from keel.recovery_proposal where target_kind = 'batch' and target_id = ${String(executionId)} order by id desc
      limit 50`),
    readOperatorHistory(db, executionId),
  ]);
  const proposalIds = proposals.rows.map((p) => String(p.id));
  const audit = await db.execute<Row>(sql`
    select id, at, actor_login, actor_role, action, outcome, code, reason from keel.audit_event
    where (target_kind = 'batch_execution' and target_id = ${String(executionId)})
       or (target_kind = 'recovery_proposal' and target_id = any(${sql.param(proposalIds)}::text[]))
    order by id desc limit 100`);
  return {
    id: num(e.id),
    jobName: e.job_name as string,
    definitionRevision: e.definition_revision as string,
    deliveryMode: (e.delivery_mode as string | null) ?? null,
    instanceId: num(e.job_instance_id),
    status: e.status as string,
    attempt: num(e.attempt),
    version: num(e.version),
    exitCode: (e.exit_code as string | null) ?? null,
    failureCategory: (e.failure_category as string | null) ?? null,
    createdAt: iso(e.created_at)!,
    startedAt: iso(e.started_at),
    endedAt: iso(e.ended_at),
    updatedAt: iso(e.updated_at)!,
    stale: e.stale as boolean,
    owner: e.owner as ExecutionDetail['owner'],
    stopRequest: e.stop_requested_at ? { at: iso(e.stop_requested_at)!, by: e.stop_requested_by as string } : null,
    steps: steps.rows.map((s) => ({
      id: num(s.id),
      logicalId: s.step_logical_id as string,
      status: s.status as string,
      counts: {
        read: num(s.read_count),
        processed: num(s.processed_count),
        write: num(s.write_count),
        filter: num(s.filter_count),
        commit: num(s.commit_count),
        rollback: num(s.rollback_count),
      },
      retries: { read: num(s.read_retry_count), process: num(s.process_retry_count), write: num(s.write_retry_count) },
      skips: { read: num(s.read_skip_count), process: num(s.process_skip_count), write: num(s.write_skip_count) },
      checkpoint:
        s.checkpoint_format === null
          ? null
          : {
              format: num(s.checkpoint_format),
              schema: s.checkpoint_schema as string,
              schemaVersion: num(s.checkpoint_schema_version),
              encodedLen: num(s.checkpoint_len),
            },
      faultState: faultStateOf(s, e.manifest),
      updatedAt: iso(s.updated_at)!,
    })),
    decisions: decisions.rows.map((d) => ({
      id: num(d.id),
      executionVersion: num(d.execution_version),
      priorStatus: d.prior_status as string,
      resultingStatus: d.resulting_status as string,
      reasonCode: d.reason_code as string,
      operatorReference: d.operator_reference as string,
      evidenceDigest: d.digest as string,
      decidedAt: iso(d.decided_at)!,
    })),
    proposals: proposals.rows.map((p) => ({
      id: num(p.id),
      status: p.status as string,
      proposerLogin: p.proposer_login as string,
      deciderLogin: (p.decider_login as string | null) ?? null,
      createdAt: iso(p.created_at)!,
      decidedAt: iso(p.decided_at),
      resultingStatus: (p.resulting_status as string | null) ?? null,
      reason: (p.reason as string | null) ?? null,
    })),
    operatorRequests,
    audit: audit.rows.map((a) => ({
      id: num(a.id),
      at: iso(a.at)!,
      actorLogin: a.actor_login as string,
      actorRole: a.actor_role as string,
      action: a.action as string,
      outcome: a.outcome as string,
      code: (a.code as string | null) ?? null,
      reason: (a.reason as string | null) ?? null,
    })),
    serverNow: iso(e.server_now)!,
  };
}
