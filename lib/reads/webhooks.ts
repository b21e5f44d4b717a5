import 'server-only';
import { decodedCursor } from '../domain/text';
import { webhookDeliveryQuerySchema } from '../domain/webhook-filters';
import { listWebhookDeliveries, parseWebhookCursor } from '../queries/webhooks';
import { defineRead } from './define-read';

/** Webhook deliveries, newest first, and the configured endpoints: admins only, like the page. */
export const webhookDeliveries = defineRead({
  path: '/api/webhooks/deliveries',
  permission: 'manageWebhooks',
  search: webhookDeliveryQuerySchema.extend({ cursor: decodedCursor(200, parseWebhookCursor) }),
  source: 'list',
  read: (db, { cursor, ...filters }) => listWebhookDeliveries(db, filters, cursor),
});
