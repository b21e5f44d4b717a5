import type { CappedCount } from '../domain/cursor';

// The webhook deliveries' rows and page as the browser receives them: client-safe, so components may import them.

export type WebhookDeliveryView = {
  id: number;
  eventId: number;
  kind: string;
  subject: string;
  endpoint: string;
  status: string;
  attempts: number;
  /** ISO 8601 UTC; for PENDING, when the next attempt is due. */
  nextAttemptAt: string;
  lastHttpStatus: number | null;
  lastError: string | null;
  deliveredAt: string | null;
  createdAt: string;
  /** A worker or an admin's request holds it and may be sending it now: Retry now would be refused. */
  sending: boolean;
};

export interface WebhookPage {
  rows: WebhookDeliveryView[];
  count: CappedCount;
  nextCursor: string | null;
  endpoints: { name: string; origin: string; format: string; enabled: boolean }[];
  serverNow: string;
}
