import 'server-only';
import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';
import { operatorRequestOrigin, type OperatorRequestEntry } from '../domain/operator-request';

export const OPERATOR_HISTORY_LIMIT = 200;

type Row = Record<string, unknown>;
const optionalNumber = (value: unknown) => (value === null || value === undefined ? null : Number(value));

/**
 * The runtime's operator requests for one execution, newest first, whoever made
 * them (Keel or the runtime's CLI). Served by the runtime's own index on
 * `job_execution_id`; an execution has few of them, so the sort is cheap.
 */
export async function readOperatorHistory(
  db: DbOrTx,
  executionId: number,
  limit = OPERATOR_HISTORY_LIMIT,
): Promise<OperatorRequestEntry[]> {
  const result = await db.execute<Row>(sql`
    select id, action, authorization_class, operation_id, actor_ref, reason_code,
    encode(request_digest, 'hex') as digest,
           observed_version, prior_status, result_status, outcome_class, rejection_code, requested_at
    from oxide_batch.ob_operator_request
    where job_execution_id = ${executionId}
    order by requested_at desc, id desc
    limit ${limit}`);
  return result.rows.map((r) => ({
    id: Number(r.id),
    action: r.action as string,
    authorizationClass: r.authorization_class as string,
    operationId: r.operation_id as string,
    origin: operatorRequestOrigin(r.operation_id as string),
    actorRef: r.actor_ref as string,
    reasonCode: (r.reason_code as string | null) ?? null,
    requestDigest: r.digest as string,
    observedVersion: optionalNumber(r.observed_version),
    priorStatus: (r.prior_status as string | null) ?? null,
    resultStatus: (r.result_status as string | null) ?? null,
    outcome: r.outcome_class as string,
    rejectionCode: (r.rejection_code as string | null) ?? null,
    requestedAt: new Date(r.requested_at as string).toISOString(),
  }));
}
