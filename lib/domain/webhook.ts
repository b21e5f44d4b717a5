import { createHmac } from 'node:crypto';
import { err, ok, type Result } from './result';

/**
 * Outgoing webhook deliveries: the events, the generic body, and how a delivery is signed.
 * Signing follows the Standard Webhooks specification (standardwebhooks.com), so a receiver
 * verifies with one of its published libraries; docs/webhooks.md says how.
 */
export const WEBHOOK_HEADERS = {
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
} as const;

/**
 * The headers of Keel's earlier scheme (hex HMAC of `<timestamp>.<body>`), still sent to
 * generic endpoints so receivers written against them keep working while they move over.
 */
export const LEGACY_WEBHOOK_HEADERS = {
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
  'webhook.test',
] as const;
export type WebhookKind = (typeof WEBHOOK_KINDS)[number];

/** Attempts before a delivery is given up as FAILED (about 9 hours of backoff in all). */
export const WEBHOOK_MAX_ATTEMPTS = 12;
const FIRST_RETRY_MS = 5_000;
const RETRY_CAP_MS = 60 * 60_000;

/** Wait before attempt `attempts + 1` after `attempts` failures: 5 s doubling, capped at 1 h, no jitter. */
export function webhookRetryDelayMs(attempts: number): number {
  if (!Number.isInteger(attempts) || attempts < 1) return FIRST_RETRY_MS;
  return Math.min(FIRST_RETRY_MS * 2 ** Math.min(attempts - 1, 30), RETRY_CAP_MS);
}

const WHSEC_PREFIX = 'whsec_';
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** The Standard Webhooks bounds on a symmetric key: at least 24 bytes, at most 64 (512 bits). */
export const WEBHOOK_KEY_BYTES = { min: 24, max: 64 } as const;
/** A plain (pre-`whsec_`) secret's shortest length, as Keel has always asked. */
export const WEBHOOK_PLAIN_SECRET_MIN = 32;

/**
 * The HMAC key of a signing secret. A `whsec_<base64>` secret is the Standard Webhooks
 * form: its key is the decoded bytes. Any other secret (Keel's earlier form) keys the HMAC
 * with its UTF-8 bytes, as before. Never echoes the secret in an error.
 */
export function webhookSigningKey(secret: string): Result<Buffer, string> {
  if (secret.startsWith(WHSEC_PREFIX)) {
    const encoded = secret.slice(WHSEC_PREFIX.length);
    if (!BASE64.test(encoded))
      return err('a whsec_ secret must be whsec_ followed by standard base64 (A-Z a-z 0-9 + /, = padding)');
    const key = Buffer.from(encoded, 'base64');
    if (key.length < WEBHOOK_KEY_BYTES.min || key.length > WEBHOOK_KEY_BYTES.max) {
      return err(
        `a whsec_ secret must decode to ${WEBHOOK_KEY_BYTES.min} to ${WEBHOOK_KEY_BYTES.max} bytes ` +
          `(it decodes to ${key.length})`,
      );
    }
    return ok(key);
  }
  if ([...secret].length < WEBHOOK_PLAIN_SECRET_MIN)
    return err(`a plain secret must be ${WEBHOOK_PLAIN_SECRET_MIN} or more characters (or use a whsec_ secret)`);
  return ok(Buffer.from(secret, 'utf8'));
}

/** Standard Webhooks `v1,` then the base64 HMAC-SHA256 of `<id>.<timestamp>.<body>`. */
export function standardWebhookSignature(key: Uint8Array, id: string, timestampSeconds: number, body: string): string {
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}

/** Keel's earlier `v1=` then the hex HMAC-SHA256 of `<timestamp>.<body>`, with the same key. */
export function legacyWebhookSignature(key: Uint8Array, timestampSeconds: number, body: string): string {
  return `v1=${createHmac('sha256', key).update(`${timestampSeconds}.${body}`).digest('hex')}`;
}

/** The id a receiver deduplicates by: the same on every attempt and for every endpoint. Never contains a `.`. */
export const webhookMessageId = (eventId: number): string => `keel-event-${eventId}`;

export interface WebhookBody {
  id: string;
  type: WebhookKind;
  createdAt: string;
  /** The event's fields, with `url` (the console page) when Keel knows its base URL. */
  data: Record<string, unknown>;
  /** A one-line summary, so a Slack-compatible incoming-webhook URL works as is. */
  text: string;
}

export interface WebhookEvent {
  id: number;
  kind: WebhookKind;
  createdAt: Date;
  payload: Record<string, unknown>;
}

type Data = Record<string, unknown>;
const str = (value: unknown): string => (typeof value === 'string' || typeof value === 'number' ? String(value) : '?');

/** One sentence saying what happened, without the link. */
export function webhookSummary(kind: WebhookKind, d: Data): string {
  const target = `${str(d.targetKind)} ${str(d.targetId)}`;
  const proposal =
    `${d.proposalKind === 'ABANDON' ? 'Abandon' : 'Recovery'} ` + `proposal #${str(d.proposalId)} for ${target}`;
  switch (kind) {
    case 'proposal.created':
      return (
        `${proposal} needs an approver: asked by ${str(d.proposer)}${d.note ? ` ("${str(d.note)}")` : ''}, ` +
        `expires ${str(d.deadline)}.`
      );
    case 'proposal.decided':
      return `${proposal} was ${str(d.status).toLowerCase()} by ${str(d.decider)}.`;
    case 'proposal.superseded':
      return `${proposal} is superseded: the evidence changed before approval.`;
    case 'proposal.expired':
      return `${proposal} expired without a decision.`;
    case 'proposal.cancelled':
      return `${proposal} was cancelled by ${str(d.decider)}.`;
    case 'bulk_replay.finished':
      return (
        `Bulk replay #${str(d.jobId)} finished: ` +
        `${str(d.processedCount)} of ${str(d.itemCount)} dead letters processed.`
      );
    case 'bulk_replay.cancelled':
      return (
        `Bulk replay #${str(d.jobId)} was cancelled after ` +
        `${str(d.processedCount)} of ${str(d.itemCount)} dead letters.`
      );
    case 'dead_letters.rising':
      return (
        `Dead letters for reason ${str(d.reason)} are rising: ` +
        `${str(d.count)} in the last ${str(d.windowMinutes)} min (threshold ${str(d.threshold)}).`
      );
    case 'webhook.test':
      return `Test notification from Keel to endpoint ${str(d.endpoint)}, sent by ${str(d.requestedBy)}.`;
  }
}

/** The event's fields with `path` made an absolute `url` (when Keel knows its base URL). */
export function webhookData(event: Pick<WebhookEvent, 'payload'>, baseUrl: string | undefined): Data {
  const data: Data = { ...event.payload };
  const path = typeof data.path === 'string' ? data.path : undefined;
  delete data.path;
  if (path && baseUrl) data.url = new URL(path, baseUrl).toString();
  return data;
}

/** The generic JSON body; its id stays the same across retries so a receiver can drop repeats. */
export function webhookBody(event: WebhookEvent, baseUrl: string | undefined): WebhookBody {
  const data = webhookData(event, baseUrl);
  const text = webhookSummary(event.kind, data) + (typeof data.url === 'string' ? ` ${data.url}` : '');
  return { id: webhookMessageId(event.id), type: event.kind, createdAt: event.createdAt.toISOString(), data, text };
}

export function isWebhookKind(value: unknown): value is WebhookKind {
  return typeof value === 'string' && (WEBHOOK_KINDS as readonly string[]).includes(value);
}
