import { z } from 'zod';
import { cursorText } from './text';

export const WEBHOOK_DELIVERY_STATUSES = ['PENDING', 'DELIVERED', 'FAILED'] as const;

/** The Webhooks page's filters and cursor, shared by the page, its read API and the client. */
export const webhookDeliveryQuerySchema = z.object({
  status: z.enum(WEBHOOK_DELIVERY_STATUSES).optional(),
  cursor: cursorText(200).optional(),
});
export type WebhookDeliveryQuery = z.infer<typeof webhookDeliveryQuerySchema>;

/** Only the keys the schema knows, with empty values dropped, so a query key is stable. */
export function webhookDeliverySearch(raw: Record<string, string | null | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of ['status', 'cursor'] as const) if (raw[key]) out[key] = raw[key]!;
  return out;
}
