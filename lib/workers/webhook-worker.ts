import { sql } from 'drizzle-orm';
import type { WebhookEndpointSetting, WebhookSettings } from '../config/webhooks';
import type { DbOrTx } from '../db/client';
import { postgresWebhookDeliveries } from '../adapters/webhook-deliveries';
import { httpWebhookSender } from '../adapters/webhook-sender';
import { startWorkerLoop, type RunningWorker, type WorkerLog, type WorkerWait } from './worker-loop';

const CLAIM_LIMIT = 10;
const IDLE_MS = 1_000;
const DEAD_LETTER_CHECK_MS = 60_000;
// Serializes the dead-letter check across Keel instances (an arbitrary constant of Keel's).
const DEAD_LETTER_CHECK_LOCK = 0x6b65656c_7768;

/**
 * Makes the database's endpoint list match the settings: configured names enabled (with
 * their URL's origin only, and their format), every other name disabled. Triggers write deliveries only
 * for enabled endpoints.
 */
export async function syncWebhookEndpoints(db: DbOrTx, endpoints: WebhookEndpointSetting[]): Promise<void> {
  const names = endpoints.map((e) => e.name);
  await db.transaction(async (tx) => {
    for (const endpoint of endpoints) {
      await tx.execute(sql`
        insert into keel.webhook_endpoint (name, origin, format, enabled)
        values (${endpoint.name}, ${new URL(endpoint.url).origin}, ${endpoint.format}, true)
        on conflict (name) do update set origin = excluded.origin, format = excluded.format, enabled = true,
        updated_at = now()
        where keel.webhook_endpoint.origin <> excluded.origin or keel.webhook_endpoint.format <> excluded.format
        or not keel.webhook_endpoint.enabled`);
    }
    await tx.execute(sql`update keel.webhook_endpoint set enabled = false, updated_at = now()
                         where enabled and not (name = any(${sql.param(names)}::text[]))`);
  });
}

export interface DeliveryReport {
  delivered: number;
  retried: number;
  failed: number;
}

/**
 * Claims due deliveries (FOR UPDATE SKIP LOCKED, with a lease, so instances and an admin's
 * "Retry now" never send one at once), posts each in its endpoint's format, signed, and
 * records the outcome: DELIVERED on a 2xx, else a retry with exponential backoff, FAILED
 * after WEBHOOK_MAX_ATTEMPTS. The outcome is written only while the delivery still has the
 * status and attempts it was claimed with.
 */
export async function deliverDueWebhooks(
  db: DbOrTx,
  options: { endpoints: WebhookEndpointSetting[]; baseUrl: string | undefined; fetch?: typeof fetch; limit?: number },
): Promise<DeliveryReport> {
  const report: DeliveryReport = { delivered: 0, retried: 0, failed: 0 };
  if (options.endpoints.length === 0) return report;
  const store = postgresWebhookDeliveries(db);
  const sender = httpWebhookSender(options);
  const claimed = await store.claimDue(
    options.endpoints.map((e) => e.name),
    options.limit ?? CLAIM_LIMIT,
  );
  for (const delivery of claimed) {
    const recorded = await store.recordOutcome(delivery, await sender.send(delivery));
    if (recorded?.status === 'DELIVERED') report.delivered += 1;
    else if (recorded?.status === 'FAILED') report.failed += 1;
    else if (recorded) report.retried += 1;
  }
  return report;
}

/**
 * Writes one `dead_letters.rising` event for each reason with more than the threshold of
 * dead letters recorded within the window, unless one was written for that reason within
 * the window already. Returns the reasons it reported.
 */
export async function checkDeadLetterRise(
  db: DbOrTx,
  settings: Pick<WebhookSettings, 'deadLetterThreshold' | 'deadLetterWindowMs'>,
): Promise<string[]> {
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
               'reason', c.reason, 'count', c.n, 'threshold', ${settings.deadLetterThreshold}::int, 'windowMinutes',
               ${windowMinutes}::int,
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
export function startWebhookWorker({
  db,
  log,
  settings,
  baseUrl,
  fetch: send,
  wait,
}: WebhookWorkerOptions): RunningWorker {
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
