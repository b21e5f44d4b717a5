/**
 * The Webhooks page's statuses and query words, without zod so
 * the browser can use them (webhook-filters.ts holds the schema).
 */
export const WEBHOOK_DELIVERY_STATUSES = ['PENDING', 'DELIVERED', 'FAILED'] as const;

/** Only the keys the schema knows, with empty values dropped, so a query key is stable. */
export function webhookDeliverySearch(raw: Record<string, string | null | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of ['status', 'cursor'] as const) if (raw[key]) out[key] = raw[key]!;
  return out;
}
