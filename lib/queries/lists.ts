import 'server-only';
import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';

/** Simple first pages for the retry-key, recovery, settlement and audit views. */

export type RetryKeyRow = {
  executionId: number;
  stepId: number;
  stepLogicalId: string;
  jobName: string;
  keyPrefix: string;
  phase: string;
  category: string;
  ordinal: number;
  revision: string;
};

export async function listUnresolvedRetryKeys(db: DbOrTx, limit = 100): Promise<RetryKeyRow[]> {
  const result = await db.execute<RetryKeyRow>(sql`
    select s.job_execution_id::int as "executionId", s.id::int as "stepId", s.step_logical_id as "stepLogicalId",
           i.job_name as "jobName", left(e.value->>'key', 12) as "keyPrefix", e.value->>'phase' as phase,
           e.value->>'category' as category, (e.value->>'ordinal')::int as ordinal, e.value->>'revision' as revision
    from oxide_batch.ob_step_execution s
    join oxide_batch.ob_job_execution x on x.id = s.job_execution_id
    join oxide_batch.ob_job_instance i on i.id = x.job_instance_id
    cross join lateral jsonb_array_elements(case when jsonb_typeof(s.fault_state_payload->'entries') = 'array'
                                                 then s.fault_state_payload->'entries' else '[]'::jsonb end) e(value)
    where jsonb_array_length(case when jsonb_typeof(s.fault_state_payload->'entries') = 'array'
                                  then s.fault_state_payload->'entries' else '[]'::jsonb end) > 0
    order by s.id desc, e.value->>'key'
    limit ${limit}`);
  return result.rows;
}

export type ProposalRow = {
  id: number;
  targetKind: string;
  targetId: string;
  status: string;
  proposerLogin: string;
  createdAt: Date;
  waitDeadline: Date;
};

export async function listProposals(db: DbOrTx, limit = 100): Promise<ProposalRow[]> {
  const result = await db.execute<ProposalRow>(sql`
    select id::int as id, target_kind as "targetKind", target_id as "targetId", status, proposer_login as "proposerLogin",
           created_at as "createdAt", wait_deadline as "waitDeadline"
    from keel.recovery_proposal order by id desc limit ${limit}`);
  return result.rows.map((r) => ({ ...r, createdAt: new Date(r.createdAt), waitDeadline: new Date(r.waitDeadline) }));
}

export type OrchestrationLeaseRow = {
  executionId: string;
  leaseOwner: string;
  fencingToken: number;
  leaseExpiresAtMs: number;
};

export async function listOrchestrationLeases(db: DbOrTx, limit = 100): Promise<OrchestrationLeaseRow[]> {
  const result = await db.execute<OrchestrationLeaseRow>(sql`
    select execution_id as "executionId", lease_owner as "leaseOwner", fencing_token::int as "fencingToken",
           lease_expires_at_ms as "leaseExpiresAtMs"
    from keel.durable_checkpoint order by lease_expires_at_ms, execution_id limit ${limit}`);
  return result.rows;
}

export type AttemptRow = {
  receiptId: string;
  workKind: string;
  attempts: number;
  nextVisibleAtMs: number;
  leaseOwner: string | null;
  leaseUntilMs: number | null;
  reasonCode: string | null;
};

export async function listDueAttempts(db: DbOrTx, limit = 50): Promise<AttemptRow[]> {
  const result = await db.execute<AttemptRow>(sql`
    select receipt_id as "receiptId", work_kind as "workKind", attempts, next_visible_at_ms as "nextVisibleAtMs",
           lease_owner as "leaseOwner", lease_until_ms as "leaseUntilMs", reason_code as "reasonCode"
    from settle.attempts order by next_visible_at_ms, receipt_id limit ${limit}`);
  return result.rows;
}

export type DeadLetterRow = {
  receiptId: string;
  reason: string;
  attempts: number;
  recordedAtMs: number;
};

export async function listDeadLetters(db: DbOrTx, limit = 50): Promise<DeadLetterRow[]> {
  const result = await db.execute<DeadLetterRow>(sql`
    select receipt_id as "receiptId", reason, attempts, recorded_at_ms as "recordedAtMs"
    from settle.dead_letters order by recorded_at_ms desc, receipt_id desc limit ${limit}`);
  return result.rows;
}

export type AuditRow = {
  id: number;
  at: Date;
  actorLogin: string;
  actorRole: string;
  action: string;
  targetKind: string;
  targetId: string;
  outcome: string;
  code: string | null;
};

export async function listAuditEvents(db: DbOrTx, limit = 100): Promise<AuditRow[]> {
  const result = await db.execute<AuditRow>(sql`
    select id::int as id, at, actor_login as "actorLogin", actor_role as "actorRole", action, target_kind as "targetKind",
           target_id as "targetId", outcome, code
    from keel.audit_event order by id desc limit ${limit}`);
  return result.rows.map((r) => ({ ...r, at: new Date(r.at) }));
}
