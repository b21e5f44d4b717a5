import { z } from 'zod';
import { WEBHOOK_DELIVERY_STATUSES } from './webhook-search';
import { cursorText } from './text';

export { WEBHOOK_DELIVERY_STATUSES, webhookDeliverySearch } from './webhook-search';

/** The Webhooks page's filters and cursor, shared by the page and its read API. */
export const webhookDeliveryQuerySchema = z.object({
  status: z.enum(WEBHOOK_DELIVERY_STATUSES).optional(),
  cursor: cursorText(200).optional(),
});
export type WebhookDeliveryQuery = z.infer<typeof webhookDeliveryQuerySchema>;
