import { sql } from 'drizzle-orm';
import type { WebhookEndpointSetting, WebhookSettings } from '../config/webhooks';
import type { DbOrTx } from '../db/client';
import {
  isWebhookKind,
  WEBHOOK_HEADERS,
  WEBHOOK_MAX_ATTEMPTS,
  webhookBody,
  webhookRetryDelayMs,
  webhookSignature,
} from '../domain/webhook';
import { startWorkerLoop, type RunningWorker, type WorkerLog, type WorkerWait } from './worker-loop';

const CLAIM_LIMIT = 10;
const LEASE_SECONDS = 60;
const SEND_TIMEOUT_MS = 10_000;
const IDLE_MS = 1_000;
const DEAD_LETTER_CHECK_MS = 60_000;
// Serializes the dead-letter check across Keel instances (an arbitrary constant of Keel's).
const DEAD_LETTER_CHECK_LOCK = 0x6b65656c_7768;

/**
 * Makes the database's endpoint list match the settings: configured names enabled (with
 * their URL's origin only), every other name disabled. Triggers write deliveries only
 * for enabled endpoints.
 */
export async function syncWebhookEndpoints(db: DbOrTx, endpoints: WebhookEndpointSetting[]): Promise<void> {
  const names = endpoints.map((e) => e.name);
  await db.transaction(async (tx) => {
    for (const endpoint of endpoints) {
      await tx.execute(sql`
        insert into keel.webhook_endpoint (name, origin, enabled) values (${endpoint.name}, ${new URL(endpoint.url).origin}, true)
        on conflict (name) do update set origin = excluded.origin, enabled = true, updated_at = now()
        where keel.webhook_endpoint.origin <> excluded.origin or not keel.webhook_endpoint.enabled`);
    }
    await tx.execute(sql`update keel.webhook_endpoint set enabled = false, updated_at = now()
                         where enabled and not (name = any(${sql.param(names)}::text[]))`);
  });
}

type ClaimedDelivery = {
  id: number;
  endpoint: string;
  attempts: number;
  eventId: number;
  kind: string;
  payload: Record<string, unknown>;
  createdAt: Date;
};

export interface DeliveryReport {
  delivered: number;
  retried: number;
  failed: number;
}

/** Why a send failed, in a few words: never a URL, a header or the response body. */
function failureText(error: unknown): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) return 'timeout';
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const code = typeof cause === 'object' && cause !== null ? (cause as { code?: unknown }).code : undefined;
  return typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code) ? `network error ${code}` : 'network error';
}

/**
 * Claims due deliveries (FOR UPDATE SKIP LOCKED, with a lease, so instances never send one
 * at once), posts each signed body and records the outcome: DELIVERED on a 2xx, else a
 * retry with exponential backoff, FAILED after WEBHOOK_MAX_ATTEMPTS. The outcome is
 * written only while the delivery still has the attempt count it was claimed with.
 */
export async function deliverDueWebhooks(
  db: DbOrTx,
  options: { endpoints: WebhookEndpointSetting[]; baseUrl: string | undefined; fetch?: typeof fetch; limit?: number },
): Promise<DeliveryReport> {
  const report: DeliveryReport = { delivered: 0, retried: 0, failed: 0 };
  const byName = new Map(options.endpoints.map((e) => [e.name, e]));
  if (byName.size === 0) return report;
  const send = options.fetch ?? fetch;
  const claimed = await db.execute<ClaimedDelivery>(sql`
    with due as (
      select id from keel.webhook_delivery
      where status = 'PENDING' and next_attempt_at <= clock_timestamp()
        and (lease_until is null or lease_until < clock_timestamp())
        and endpoint = any(${sql.param([...byName.keys()])}::text[])
      order by next_attempt_at, id
      limit ${options.limit ?? CLAIM_LIMIT}
      for update skip locked
    ), leased as (
      update keel.webhook_delivery d set lease_until = clock_timestamp() + make_interval(secs => ${LEASE_SECONDS})
      from due where d.id = due.id
      returning d.id, d.endpoint, d.attempts, d.event_id
    )
    select l.id, l.endpoint, l.attempts, e.id as "eventId", e.kind, e.payload, e.created_at as "createdAt"
    from leased l join keel.webhook_event e on e.id = l.event_id order by l.id`);

  for (const delivery of claimed.rows) {
    const endpoint = byName.get(delivery.endpoint)!;
    let httpStatus: number | null = null;
    let error: string | null = null;
    if (!isWebhookKind(delivery.kind)) {
      error = 'unknown event kind';
    } else {
      const body = JSON.stringify(webhookBody({ id: delivery.eventId, kind: delivery.kind, createdAt: new Date(delivery.createdAt), payload: delivery.payload }, options.baseUrl));
      const timestamp = Math.floor(Date.now() / 1000);
      try {
        const response = await send(endpoint.url, {
          method: 'POST',
          redirect: 'manual',
          signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
          headers: {
            'content-type': 'application/json',
            'user-agent': 'Keel-Webhooks/1',
            [WEBHOOK_HEADERS.id]: `keel-event-${delivery.eventId}`,
            [WEBHOOK_HEADERS.timestamp]: String(timestamp),
            [WEBHOOK_HEADERS.signature]: webhookSignature(endpoint.secret, timestamp, body),
          },
          body,
        });
        httpStatus = response.status;
        await response.body?.cancel().catch(() => {});
        if (response.status < 200 || response.status > 299) error = `HTTP ${response.status}`;
      } catch (sendError) {
        error = failureText(sendError);
      }
    }
    const attempts = delivery.attempts + 1;
    if (error === null) {
      await db.execute(sql`
        update keel.webhook_delivery set status = 'DELIVERED', attempts = ${attempts}, delivered_at = clock_timestamp(),
               last_http_status = ${httpStatus}, last_error = null, lease_until = null
        where id = ${delivery.id} and status = 'PENDING' and attempts = ${delivery.attempts}`);
      report.delivered += 1;
    } else if (attempts >= WEBHOOK_MAX_ATTEMPTS) {
      await db.execute(sql`
        update keel.webhook_delivery set status = 'FAILED', attempts = ${attempts}, last_http_status = ${httpStatus},
               last_error = ${error}, lease_until = null
        where id = ${delivery.id} and status = 'PENDING' and attempts = ${delivery.attempts}`);
      report.failed += 1;
    } else {
      await db.execute(sql`
        update keel.webhook_delivery set attempts = ${attempts}, last_http_status = ${httpStatus}, last_error = ${error}, lease_until = null,
               next_attempt_at = clock_timestamp() + make_interval(secs => ${webhookRetryDelayMs(attempts) / 1000}::float8)
        where id = ${delivery.id} and status = 'PENDING' and attempts = ${delivery.attempts}`);
      report.retried += 1;
    }
  }
  return report;
}

/**
 * Writes one `dead_letters.rising` event for each reason with more than the threshold of
 * dead letters recorded within the window, unless one was written for that reason within
 * the window already. Returns the reasons it reported.
 */
export async function checkDeadLetterRise(db: DbOrTx, settings: Pick<WebhookSettings, 'deadLetterThreshold' | 'deadLetterWindowMs'>): Promise<string[]> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${DEAD_LETTER_CHECK_LOCK}::bigint)`);
    const windowMinutes = Math.round(settings.deadLetterWindowMs / 60_000);
    const rising = await tx.execute<{ reason: string }>(sql`
      with clock as (select (extract(epoch from clock_timestamp()) * 1000)::bigint as ms),
      counts as (
        select d.reason, count(*)::int as n from settle.dead_letters d, clock
        where d.recorded_at_ms > clock.ms - ${settings.deadLetterWindowMs}
        group by d.reason having count(*) > ${settings.deadLetterThreshold}
      )
      select c.reason, keel.webhook_enqueue('dead_letters.rising', 'dead_letters:' || c.reason, jsonb_build_object(
               'reason', c.reason, 'count', c.n, 'threshold', ${settings.deadLetterThreshold}::int, 'windowMinutes', ${windowMinutes}::int,
               'path', '/settlements/dead-letters?reason=' || c.reason)) as enqueued
      from counts c
      where not exists (
        select 1 from keel.webhook_event e
        where e.kind = 'dead_letters.rising' and e.subject = 'dead_letters:' || c.reason
          and e.created_at > clock_timestamp() - make_interval(secs => ${settings.deadLetterWindowMs / 1000}::float8))
      order by c.reason`);
    return rising.rows.map((r) => r.reason);
  });
}

export interface WebhookWorkerOptions {
  db: DbOrTx;
  log: WorkerLog;
  settings: WebhookSettings;
  baseUrl: string | undefined;
  fetch?: typeof fetch;
  wait?: WorkerWait;
}

/** Delivers webhooks until stopped, and checks for rising dead letters every minute. */
export function startWebhookWorker({ db, log, settings, baseUrl, fetch: send, wait }: WebhookWorkerOptions): RunningWorker {
  let lastCheck = 0;
  return startWorkerLoop({
    name: 'webhook worker',
    announce: { endpoints: settings.endpoints.length },
    log,
    wait,
    errorDelayMs: 5_000,
    async step() {
      if (Date.now() - lastCheck >= DEAD_LETTER_CHECK_MS) {
        lastCheck = Date.now();
        const reasons = await checkDeadLetterRise(db, settings);
        if (reasons.length > 0) log('info', 'dead letters rising', { reasons: reasons.length });
      }
      const report = await deliverDueWebhooks(db, { endpoints: settings.endpoints, baseUrl, fetch: send });
      if (report.retried + report.failed > 0) log('warn', 'webhook deliveries failed', { ...report });
      return report.delivered + report.retried + report.failed > 0 ? 0 : IDLE_MS;
    },
  });
}
