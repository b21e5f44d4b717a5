import type { WebhookKind } from '../domain/webhook';
import type { AuditLog } from './audit-log';

export type WebhookDeliveryStatus = 'PENDING' | 'DELIVERED' | 'FAILED';

/** A delivery as the admin page and its actions see it. */
export type WebhookDeliveryState = {
  id: number;
  endpoint: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  lastHttpStatus: number | null;
  lastError: string | null;
};

/**
 * A delivery this process holds (its lease is set) and is about to send: what the sender
 * needs to build the request, and the status and attempts it was claimed with, which
 * guard the outcome it records.
 */
export interface ClaimedWebhookDelivery {
  id: number;
  endpoint: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  event: { id: number; kind: WebhookKind | string; createdAt: Date; payload: Record<string, unknown> };
}

/** How one attempt ended: a 2xx is delivered, anything else (or no answer) failed with a short reason. */
export interface WebhookOutcome {
  httpStatus: number | null;
  /** null when delivered; never a URL, a header or the response body. */
  error: string | null;
}

/** A delivery under its row lock, for an admin's "Retry now". */
export type LockedWebhookDelivery = WebhookDeliveryState & {
  /** A worker (or another admin's request) holds its lease and may be sending it now. */
  leased: boolean;
};

/** An earlier applied admin operation, found by its operation id in the audit log. */
export type AppliedWebhookOperation = {
  actorId: string | null;
  targetId: string;
  after: unknown;
};

/** `keel.webhook_endpoint`, `keel.webhook_event` and `keel.webhook_delivery`. */
export interface WebhookDeliveryStore {
  /** Claims up to `limit` due PENDING deliveries of these endpoints (FOR UPDATE SKIP LOCKED), leasing each. */
  claimDue(endpoints: readonly string[], limit: number): Promise<ClaimedWebhookDelivery[]>;
  /**
   * Records an attempt's outcome, only while the delivery still has the status and
   * attempts it was claimed with: DELIVERED on success, else FAILED once the attempts
   * reach the limit, else PENDING with the next backoff. Null when it no longer matched.
   */
  recordOutcome(claimed: ClaimedWebhookDelivery, outcome: WebhookOutcome): Promise<WebhookDeliveryState | null>;
  /** Locks the delivery's row (FOR UPDATE) for the rest of the transaction. */
  lockForRetry(deliveryId: number): Promise<LockedWebhookDelivery | null>;
  /** Sets the lease on a delivery locked by lockForRetry and returns it claimed. */
  lease(deliveryId: number): Promise<ClaimedWebhookDelivery>;
  /** Whether the endpoint is configured and enabled in the database. */
  isEnabledEndpoint(endpoint: string): Promise<boolean>;
  /** Writes a `webhook.test` event and one delivery for `endpoint`, already leased to this process. */
  createTestDelivery(endpoint: string, requestedBy: string): Promise<ClaimedWebhookDelivery>;
  /** Serializes requests carrying one operation id (a transaction-scoped lock). */
  lockOperation(operationId: string): Promise<void>;
  findAppliedOperation(action: string, operationId: string): Promise<AppliedWebhookOperation | null>;
  findDelivery(deliveryId: number): Promise<WebhookDeliveryState | null>;
}

/** Posts one claimed delivery to its endpoint, in the endpoint's format, signed. */
export interface WebhookSender {
  /** Whether this process has the endpoint in its settings (its URL and keys). */
  knows(endpoint: string): boolean;
  send(delivery: ClaimedWebhookDelivery): Promise<WebhookOutcome>;
}

export interface WebhookAdminTransaction {
  deliveries: WebhookDeliveryStore;
  audit: AuditLog;
}
