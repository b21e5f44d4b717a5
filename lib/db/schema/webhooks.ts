import { sql } from 'drizzle-orm';
import { bigint, check, index, integer, jsonb, text, timestamp, uniqueIndex, boolean } from 'drizzle-orm/pg-core';
import { WEBHOOK_FORMATS } from '../../domain/webhook-formats';
import { WEBHOOK_DELIVERY_STATUSES } from '../../domain/webhook-filters';
import { textList } from '../sql/text-list';
import { keel } from './keel';

/**
 * Outgoing webhooks: an outbox. Database triggers write an event and one delivery per
 * enabled endpoint in the transaction that changed the proposal or bulk replay, so a
 * notification exists exactly when its change committed. Endpoints are named here; their
 * URLs and signing secrets stay in the environment (an incoming-webhook URL is a secret).
 */
export const webhookEndpoint = keel.table(
  'webhook_endpoint',
  {
    name: text('name').primaryKey(),
    // Only the URL's origin, for the admin page: the path of a chat webhook is a secret.
    origin: text('origin').notNull(),
    // KEEL_WEBHOOK_FORMAT_<NAME>, shown on the admin page; the keys it needs stay in the environment.
    format: text('format').notNull().default('generic'),
    enabled: boolean('enabled').notNull().default(true),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [
    check('webhook_endpoint_name', sql`${t.name} ~ '^[a-z0-9_-]{1,32}$'`),
    check('webhook_endpoint_format', sql`${t.format} in (${textList(WEBHOOK_FORMATS)})`),
  ],
);

export const webhookEvent = keel.table(
  'webhook_event',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    kind: text('kind').notNull(),
    // What the event is about, for the admin page and for "once per window" checks.
    subject: text('subject').notNull(),
    payload: jsonb('payload').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().default(sql`clock_timestamp()`),
  },
  (t) => [index('webhook_event_kind_subject_idx').on(t.kind, t.subject, t.createdAt)],
);

export const webhookDelivery = keel.table(
  'webhook_delivery',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    eventId: bigint('event_id', { mode: 'number' })
      .notNull()
      .references(() => webhookEvent.id, { onDelete: 'cascade' }),
    endpoint: text('endpoint').notNull(),
    status: text('status').notNull().default('PENDING'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, mode: 'date' })
      .notNull()
      .default(sql`clock_timestamp()`),
    // A worker holds a delivery while it sends it; another instance takes it over only after this.
    leaseUntil: timestamp('lease_until', { withTimezone: true, mode: 'date' }),
    lastHttpStatus: integer('last_http_status'),
    lastError: text('last_error'),
    deliveredAt: timestamp('delivered_at', { withTimezone: true, mode: 'date' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().default(sql`clock_timestamp()`),
  },
  (t) => [
    check('webhook_delivery_status', sql`${t.status} in (${textList(WEBHOOK_DELIVERY_STATUSES)})`),
    check('webhook_delivery_delivered_shape', sql`(${t.status} = 'DELIVERED') = (${t.deliveredAt} is not null)`),
    check('webhook_delivery_error_length', sql`${t.lastError} is null or length(${t.lastError}) <= 200`),
    uniqueIndex('webhook_delivery_event_endpoint').on(t.eventId, t.endpoint),
    // The worker's claim: pending deliveries in due order.
    index('webhook_delivery_due_idx').on(t.nextAttemptAt, t.id).where(sql`${t.status} = 'PENDING'`),
    index('webhook_delivery_status_idx').on(t.status, t.id),
  ],
);
