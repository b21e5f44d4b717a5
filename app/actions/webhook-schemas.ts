import { z } from 'zod';
import { operationIdSchema } from '@/lib/domain/identifier-patterns';

/** Zod schemas shared by the Webhooks page's buttons and their server actions. */

// The button's idempotency key, made when it is shown and again after each answer.
const operationId = operationIdSchema();

/** Send a `webhook.test` event to one configured endpoint. */
export const sendTestWebhookSchema = z.object({
  endpoint: z.string().regex(/^[a-z0-9_-]{1,32}$/, 'An endpoint name is 1 to 32 of a-z, 0-9, _ and -.'),
  operationId,
});

/** Send one pending or failed delivery now. */
export const retryWebhookSchema = z.object({
  deliveryId: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER),
  operationId,
});
