import { createLoader, parseAsString, parseAsStringLiteral } from 'nuqs/server';
import { WEBHOOK_DELIVERY_STATUSES } from '../domain/webhook-search';

/** The webhook deliveries' URL state (webhookDeliveryQuerySchema validates the same params). */
export const webhooksSearch = {
  status: parseAsStringLiteral(WEBHOOK_DELIVERY_STATUSES),
  cursor: parseAsString,
};
export const loadWebhooksSearch = createLoader(webhooksSearch);
