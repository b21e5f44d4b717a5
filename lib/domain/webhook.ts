import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Outgoing webhook deliveries: the body Keel posts, how it is signed and how a receiver
 * checks it. Header names and the signature scheme are documented in docs/webhooks.md.
 */
export const WEBHOOK_HEADERS = {
  id: 'keel-webhook-id',
  timestamp: 'keel-webhook-timestamp',
  signature: 'keel-webhook-signature',
} as const;

export const WEBHOOK_KINDS = [
  'proposal.created',
  'proposal.decided',
  'proposal.superseded',
  'proposal.expired',
  'proposal.cancelled',
  'bulk_replay.finished',
  'bulk_replay.cancelled',
  'dead_letters.rising',
] as const;
export type WebhookKind = (typeof WEBHOOK_KINDS)[number];

/** How long a receiver accepts a signed timestamp, either side of its own clock. */
export const WEBHOOK_REPLAY_WINDOW_SECONDS = 300;
/** Attempts before a delivery is given up as FAILED (about 9 hours of backoff in all). */
export const WEBHOOK_MAX_ATTEMPTS = 12;
const FIRST_RETRY_MS = 5_000;
const RETRY_CAP_MS = 60 * 60_000;

/** Wait before attempt `attempts + 1` after `attempts` failures: 5 s doubling, capped at 1 h, no jitter. */
export function webhookRetryDelayMs(attempts: number): number {
  if (!Number.isInteger(attempts) || attempts < 1) return FIRST_RETRY_MS;
  return Math.min(FIRST_RETRY_MS * 2 ** Math.min(attempts - 1, 30), RETRY_CAP_MS);
}

/** `v1=` then the hex HMAC-SHA256, keyed by the endpoint's secret, of `<timestamp>.<body>`. */
export function webhookSignature(secret: string, timestampSeconds: number, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestampSeconds}.${body}`).digest('hex')}`;
}

export type WebhookVerification =
  | { ok: true }
  | { ok: false; code: 'MISSING_HEADERS' | 'STALE_TIMESTAMP' | 'BAD_SIGNATURE' };

/** What a receiver does: check the signature in constant time and the timestamp against its clock. */
export function verifyWebhook(
  secret: string,
  headers: { timestamp: string | null | undefined; signature: string | null | undefined },
  body: string,
  nowSeconds: number,
): WebhookVerification {
  if (!headers.timestamp || !headers.signature || !/^\d{1,12}$/.test(headers.timestamp)) return { ok: false, code: 'MISSING_HEADERS' };
  const timestamp = Number(headers.timestamp);
  if (Math.abs(nowSeconds - timestamp) > WEBHOOK_REPLAY_WINDOW_SECONDS) return { ok: false, code: 'STALE_TIMESTAMP' };
  const expected = Buffer.from(webhookSignature(secret, timestamp, body));
  const given = Buffer.from(headers.signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return { ok: false, code: 'BAD_SIGNATURE' };
  return { ok: true };
}

export interface WebhookBody {
  id: string;
  type: WebhookKind;
  createdAt: string;
  /** The event's fields, with `url` (the console page) when Keel knows its base URL. */
  data: Record<string, unknown>;
  /** A one-line summary, so a Slack-compatible incoming-webhook URL works as is. */
  text: string;
}

type Data = Record<string, unknown>;
const str = (value: unknown): string => (typeof value === 'string' || typeof value === 'number' ? String(value) : '?');

function summary(kind: WebhookKind, d: Data): string {
  const target = `${str(d.targetKind)} ${str(d.targetId)}`;
  const proposal = `${d.proposalKind === 'ABANDON' ? 'Abandon' : 'Recovery'} proposal #${str(d.proposalId)} for ${target}`;
  switch (kind) {
    case 'proposal.created':
      return `${proposal} needs an approver: asked by ${str(d.proposer)}${d.note ? ` ("${str(d.note)}")` : ''}, expires ${str(d.deadline)}.`;
    case 'proposal.decided':
      return `${proposal} was ${str(d.status).toLowerCase()} by ${str(d.decider)}.`;
    case 'proposal.superseded':
      return `${proposal} is superseded: the evidence changed before approval.`;
    case 'proposal.expired':
      return `${proposal} expired without a decision.`;
    case 'proposal.cancelled':
      return `${proposal} was cancelled by ${str(d.decider)}.`;
    case 'bulk_replay.finished':
      return `Bulk replay #${str(d.jobId)} finished: ${str(d.processedCount)} of ${str(d.itemCount)} dead letters processed.`;
    case 'bulk_replay.cancelled':
      return `Bulk replay #${str(d.jobId)} was cancelled after ${str(d.processedCount)} of ${str(d.itemCount)} dead letters.`;
    case 'dead_letters.rising':
      return `Dead letters for reason ${str(d.reason)} are rising: ${str(d.count)} in the last ${str(d.windowMinutes)} min (threshold ${str(d.threshold)}).`;
  }
}

/** The JSON body of one delivery; its id stays the same across retries so a receiver can drop repeats. */
export function webhookBody(event: { id: number; kind: WebhookKind; createdAt: Date; payload: Data }, baseUrl: string | undefined): WebhookBody {
  const data: Data = { ...event.payload };
  const path = typeof data.path === 'string' ? data.path : undefined;
  delete data.path;
  if (path && baseUrl) data.url = new URL(path, baseUrl).toString();
  const text = summary(event.kind, data) + (typeof data.url === 'string' ? ` ${data.url}` : '');
  return { id: `keel-event-${event.id}`, type: event.kind, createdAt: event.createdAt.toISOString(), data, text };
}

export function isWebhookKind(value: unknown): value is WebhookKind {
  return typeof value === 'string' && (WEBHOOK_KINDS as readonly string[]).includes(value);
}
