import 'server-only';
import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';
import { WEBHOOK_MAX_ATTEMPTS, webhookRetryDelayMs } from '../domain/webhook';
import type { UnitOfWork } from '../ports/unit-of-work';
import type {
  AppliedWebhookOperation,
  ClaimedWebhookDelivery,
  LockedWebhookDelivery,
  WebhookAdminTransaction,
  WebhookDeliveryState,
  WebhookDeliveryStore,
  WebhookOutcome,
} from '../ports/webhook-deliveries';
import { postgresAuditLog } from './audit-log';
import { postgresUnitOfWork } from './unit-of-work';

/** How long a claimed delivery stays with the process sending it; a send times out well before. */
export const WEBHOOK_LEASE_SECONDS = 60;

type ClaimedRow = {
  id: number;
  endpoint: string;
  status: ClaimedWebhookDelivery['status'];
  attempts: number;
  eventId: number;
  kind: string;
  payload: Record<string, unknown>;
  createdAt: Date;
};

const claimed = (row: ClaimedRow): ClaimedWebhookDelivery => ({
  id: row.id,
  endpoint: row.endpoint,
  status: row.status,
  attempts: row.attempts,
  event: { id: row.eventId, kind: row.kind, createdAt: new Date(row.createdAt), payload: row.payload },
});

const STATE = sql`d.id, d.endpoint, d.status, d.attempts, d.last_http_status as "lastHttpStatus",
                  d.last_error as "lastError"`;

export function postgresWebhookDeliveries(db: DbOrTx): WebhookDeliveryStore {
  const claimedById = async (deliveryId: number): Promise<ClaimedWebhookDelivery> => {
    const { rows } = await db.execute<ClaimedRow>(sql`
      select d.id, d.endpoint, d.status, d.attempts, e.id as "eventId", e.kind, e.payload, e.created_at as "createdAt"
      from keel.webhook_delivery d join keel.webhook_event e on e.id = d.event_id where d.id = ${deliveryId}`);
    if (!rows[0]) throw new Error('the leased delivery is gone');
    return claimed(rows[0]);
  };

  return {
    async claimDue(endpoints, limit) {
      if (endpoints.length === 0) return [];
      const { rows } = await db.execute<ClaimedRow>(sql`
        with due as (
          select id from keel.webhook_delivery
          where status = 'PENDING' and next_attempt_at <= clock_timestamp()
            and (lease_until is null or lease_until < clock_timestamp())
            and endpoint = any(${sql.param([...endpoints])}::text[])
          order by next_attempt_at, id
          limit ${limit}
          for update skip locked
        ), leased as (
          update keel.webhook_delivery d set lease_until = clock_timestamp()
          + make_interval(secs => ${WEBHOOK_LEASE_SECONDS})
          from due where d.id = due.id
          returning d.id, d.endpoint, d.status, d.attempts, d.event_id
        )
        select l.id, l.endpoint, l.status, l.attempts, e.id as "eventId", e.kind, e.payload, e.created_at as "createdAt"
        from leased l join keel.webhook_event e on e.id = l.event_id order by l.id`);
      return rows.map(claimed);
    },

    async recordOutcome(delivery, outcome: WebhookOutcome) {
      const attempts = delivery.attempts + 1;
      const guard = sql`d.id = ${delivery.id} and d.status = ${delivery.status} and d.attempts = ${delivery.attempts}`;
      const { rows } =
        outcome.error === null
          ? await db.execute<WebhookDeliveryState>(sql`
              update keel.webhook_delivery d set status = 'DELIVERED', attempts = ${attempts},
              delivered_at = clock_timestamp(),
                     last_http_status = ${outcome.httpStatus}, last_error = null, lease_until = null
              where ${guard} returning ${STATE}`)
          : attempts >= WEBHOOK_MAX_ATTEMPTS
            ? await db.execute<WebhookDeliveryState>(sql`
                update keel.webhook_delivery d set status = 'FAILED', attempts = ${attempts},
                last_http_status = ${outcome.httpStatus},
                       last_error = ${outcome.error}, lease_until = null
                where ${guard} returning ${STATE}`)
            : await db.execute<WebhookDeliveryState>(sql`
                update keel.webhook_delivery d set status = 'PENDING', attempts = ${attempts},
                last_http_status = ${outcome.httpStatus},
                       last_error = ${outcome.error}, lease_until = null,
                       next_attempt_at = clock_timestamp()
                       + make_interval(secs => ${webhookRetryDelayMs(attempts) / 1000}::float8)
                where ${guard} returning ${STATE}`);
      return rows[0] ?? null;
    },

    async lockForRetry(deliveryId) {
      const { rows } = await db.execute<LockedWebhookDelivery>(sql`
        select ${STATE}, coalesce(d.lease_until > clock_timestamp(), false) as leased
        from keel.webhook_delivery d where d.id = ${deliveryId} for update`);
      return rows[0] ?? null;
    },

    async lease(deliveryId) {
      await db.execute(
        sql`update keel.webhook_delivery set lease_until = clock_timestamp()
            + make_interval(secs => ${WEBHOOK_LEASE_SECONDS}) where id = ${deliveryId}`,
      );
      return claimedById(deliveryId);
    },

    async isEnabledEndpoint(endpoint) {
      const { rows } = await db.execute<{ enabled: boolean }>(
        sql`select enabled from keel.webhook_endpoint where name = ${endpoint}`,
      );
      return rows[0]?.enabled === true;
    },

    async createTestDelivery(endpoint, requestedBy) {
      const { rows } = await db.execute<{ id: number }>(sql`
        with event as (
          insert into keel.webhook_event (kind, subject, payload)
          values ('webhook.test', ${`endpoint:${endpoint}`},
          jsonb_build_object('endpoint', ${endpoint}::text, 'requestedBy', ${requestedBy}::text, 'path', '/webhooks'))
          returning id
        )
        insert into keel.webhook_delivery (event_id, endpoint, lease_until)
        select id, ${endpoint}, clock_timestamp() + make_interval(secs => ${WEBHOOK_LEASE_SECONDS}) from event
        returning id`);
      return claimedById(rows[0]!.id);
    },

    async lockOperation(operationId) {
      await db.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`webhook-operation:${operationId}`}, 0))`);
    },

    async findAppliedOperation(action, operationId) {
      const { rows } = await db.execute<AppliedWebhookOperation>(sql`
        select actor_id as "actorId", target_id as "targetId", after from keel.audit_event
        where operation_id = ${operationId} and outcome = 'APPLIED' and action = ${action}
        order by id limit 1`);
      return rows[0] ?? null;
    },

    async findDelivery(deliveryId) {
      const { rows } = await db.execute<WebhookDeliveryState>(
        sql`select ${STATE} from keel.webhook_delivery d where d.id = ${deliveryId}`,
      );
      return rows[0] ?? null;
    },
  };
}

/** The admin actions' transactions: the delivery store and the audit log on one connection. */
export function postgresWebhookUnitOfWork(db: DbOrTx): UnitOfWork<WebhookAdminTransaction> {
  return postgresUnitOfWork(db, (tx) => ({ deliveries: postgresWebhookDeliveries(tx), audit: postgresAuditLog(tx) }));
}
