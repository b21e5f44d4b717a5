'use server';

import { mapOk } from '@/lib/domain/result';
import { action } from '@/lib/server/action';
import { webhookAdminPorts } from '@/lib/server/composition-root';
import { retryWebhookDelivery, sendTestWebhook, type WebhookAdminResult } from '@/lib/services/webhook-admin';
import { retryWebhookSchema, sendTestWebhookSchema } from './webhook-schemas';

/** What the page learns of a delivery an action sent (or had sent, for a repeated operation id). */
export interface WebhookActionOutcome {
  deliveryId: number;
  endpoint: string;
  status: string;
  attempts: number;
  httpStatus: number | null;
  error: string | null;
  repeated: boolean;
}

const outcome = ({ delivery, repeated }: WebhookAdminResult): WebhookActionOutcome => ({
  deliveryId: delivery.id,
  endpoint: delivery.endpoint,
  status: delivery.status,
  attempts: delivery.attempts,
  httpStatus: delivery.lastHttpStatus,
  error: delivery.lastError,
  repeated,
});

/** Sends a `webhook.test` event to one endpoint now; the same operation id sends once. */
export const sendTestWebhookAction = action(sendTestWebhookSchema, 'webhook.send_test', async (actor, input) =>
  mapOk(await sendTestWebhook(webhookAdminPorts(), actor, input), outcome),
);

/** Sends a pending or failed delivery now, unless a worker is sending it at this moment. */
export const retryWebhookAction = action(retryWebhookSchema, 'webhook.retry', async (actor, input) =>
  mapOk(await retryWebhookDelivery(webhookAdminPorts(), actor, input), outcome),
);
