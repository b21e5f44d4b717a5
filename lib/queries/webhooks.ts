import 'server-only';
import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';
import { COUNT_CAP, decodeCursor, encodeCursor } from '../domain/cursor';
import type { WebhookDeliveryQuery } from '../domain/webhook-filters';
import type { WebhookDeliveryView, WebhookPage } from './webhooks-types';

export const WEBHOOK_PAGE_SIZE = 50;

/** The delivery id after which the page starts (newest first), null for the first page, or 'invalid'. */
export function parseWebhookCursor(raw: string | undefined): number | null | 'invalid' {
  if (!raw) return null;
  const values = decodeCursor(raw, 1);
  return values && typeof values[0] === 'number' && Number.isSafeInteger(values[0]) ? values[0] : 'invalid';
}

const iso = (column: string) => sql.raw(`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`);

/** Deliveries newest first, keyset-paged on id (the status filter has its index on (status, id)). */
export async function listWebhookDeliveries(
  db: DbOrTx,
  query: Pick<WebhookDeliveryQuery, 'status'>,
  before: number | null,
  pageSize = WEBHOOK_PAGE_SIZE,
): Promise<WebhookPage> {
  const where = sql`${query.status ? sql`d.status = ${query.status}` : sql`true`}
                    and ${before === null ? sql`true` : sql`d.id < ${before}`}`;
  const countWhere = query.status ? sql`status = ${query.status}` : sql`true`;
  const [rows, counted, endpoints, now] = await Promise.all([
    db.execute<WebhookDeliveryView>(sql`
      select d.id, d.event_id as "eventId", e.kind, e.subject, d.endpoint, d.status, d.attempts,
             ${iso('d.next_attempt_at')} as "nextAttemptAt", d.last_http_status as "lastHttpStatus",
             d.last_error as "lastError",
             ${iso('d.delivered_at')} as "deliveredAt", ${iso('d.created_at')} as "createdAt",
             coalesce(d.lease_until > clock_timestamp(), false) as sending
      from keel.webhook_delivery d join keel.webhook_event e on e.id = d.event_id
      where ${where} order by d.id desc limit ${pageSize + 1}`),
    db.execute<{ n: number }>(
      sql`select count(*)::int as n from (select 1 from keel.webhook_delivery where ${countWhere}
          limit ${COUNT_CAP + 1}) c`,
    ),
    db.execute<{ name: string; origin: string; format: string; enabled: boolean }>(
      sql`select name, origin, format, enabled from keel.webhook_endpoint order by enabled desc, name`,
    ),
    db.execute<{ now: string }>(sql`select ${iso('clock_timestamp()')} as now`),
  ]);
  const page = rows.rows.slice(0, pageSize);
  const n = counted.rows[0]?.n ?? 0;
  return {
    rows: page,
    count: { value: Math.min(n, COUNT_CAP), capped: n > COUNT_CAP },
    nextCursor: rows.rows.length > pageSize ? encodeCursor([page.at(-1)!.id]) : null,
    endpoints: endpoints.rows,
    serverNow: now.rows[0]!.now,
  };
}
