import { createHash } from 'node:crypto';
import { webhookBody, webhookData, webhookSummary, type WebhookEvent, type WebhookKind } from './webhook';

/**
 * What one delivery looks like on the wire for each endpoint format: Keel's generic JSON,
 * a Slack incoming webhook, PagerDuty Events API v2 or the Opsgenie Alert API. Limits are
 * the vendors' published ones; docs/webhooks.md maps each event to each format.
 */
export const WEBHOOK_FORMATS = ['generic', 'slack', 'pagerduty', 'opsgenie'] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

export const isWebhookFormat = (value: unknown): value is WebhookFormat =>
  typeof value === 'string' && (WEBHOOK_FORMATS as readonly string[]).includes(value);

/** The unsigned request of one delivery; the sender adds the signature headers. */
export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface WebhookTarget {
  url: string;
  format: WebhookFormat;
  /** PagerDuty's 32-character integration key (KEEL_WEBHOOK_ROUTING_KEY_<NAME>). */
  routingKey?: string | null;
  /** Opsgenie's API integration key (KEEL_WEBHOOK_API_KEY_<NAME>), sent as `GenieKey <key>`. */
  apiKey?: string | null;
}

/**
 * How an incident tool sees an event: it opens an alert under a key, or closes the one it
 * opened. A proposal waiting for an approver opens; any decision on it closes the same alert.
 */
export interface WebhookAlert {
  action: 'open' | 'close';
  key: string;
  severity: 'critical' | 'error' | 'warning' | 'info';
  priority: 'P1' | 'P2' | 'P3' | 'P4' | 'P5';
  component: string;
}

// A key made of Keel's own ids, or (for free text such as a dead-letter reason) a digest of it.
const SAFE_KEY_PART = /^[A-Za-z0-9._:-]{1,100}$/;
const keyPart = (value: unknown): string => {
  const text = typeof value === 'string' || typeof value === 'number' ? String(value) : '';
  return SAFE_KEY_PART.test(text) ? text : createHash('sha256').update(text).digest('hex').slice(0, 32);
};

export function webhookAlert(event: Pick<WebhookEvent, 'id' | 'kind' | 'payload'>): WebhookAlert {
  const d = event.payload;
  const proposal = (action: WebhookAlert['action']): WebhookAlert => ({
    action,
    key: `keel-proposal-${keyPart(d.proposalId)}`,
    severity: 'warning',
    priority: 'P3',
    component: typeof d.targetKind === 'string' ? d.targetKind : 'recovery',
  });
  const kind: WebhookKind = event.kind;
  switch (kind) {
    case 'proposal.created':
      return proposal('open');
    case 'proposal.decided':
    case 'proposal.superseded':
    case 'proposal.expired':
    case 'proposal.cancelled':
      return proposal('close');
    case 'bulk_replay.finished':
    case 'bulk_replay.cancelled':
      return {
        action: 'open',
        key: `keel-bulk-replay-${keyPart(d.jobId)}`,
        severity: 'info',
        priority: 'P5',
        component: 'settlements',
      };
    case 'dead_letters.rising':
      return {
        action: 'open',
        key: `keel-dead-letters-${keyPart(d.reason)}`,
        severity: 'error',
        priority: 'P2',
        component: 'settlements',
      };
    case 'webhook.test':
      return { action: 'open', key: `keel-test-${event.id}`, severity: 'info', priority: 'P5', component: 'webhooks' };
  }
}

/** At most `max` characters (code points), with an ellipsis when cut. */
export function cutText(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}

// Slack reads &, < and > as markup (mrkdwn): escaped, a note cannot forge a link or a mention.
const slackEscape = (text: string) => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
const slackUrl = (url: string) => url.replaceAll('|', '%7C').replaceAll('<', '%3C').replaceAll('>', '%3E');

/** Opsgenie's `details`: string values only, 8000 characters in all (keys and values). */
function opsgenieDetails(data: Record<string, unknown>): Record<string, string> {
  const details: Record<string, string> = {};
  let budget = OPSGENIE_LIMITS.details;
  for (const [key, value] of Object.entries(data)) {
    if (value === undefined || value === null) continue;
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    const room = budget - key.length;
    if (room < 2) break;
    details[key] = cutText(text, room);
    budget -= key.length + [...details[key]].length;
  }
  return details;
}

export const PAGERDUTY_LIMITS = { summary: 1024, dedupKey: 255 } as const;
export const OPSGENIE_LIMITS = {
  message: 130,
  alias: 512,
  description: 15_000,
  details: 8_000,
  tag: 50,
  entity: 512,
  source: 100,
  note: 25_000,
} as const;
/** Slack truncates a message's text past 40,000 characters; Keel's are far shorter. */
export const SLACK_TEXT_LIMIT = 40_000;

const json = { 'content-type': 'application/json' };

/** The request that carries `event` to an endpoint of `target.format`. */
export function webhookRequest(
  event: WebhookEvent,
  target: WebhookTarget,
  baseUrl: string | undefined,
): WebhookRequest {
  const data = webhookData(event, baseUrl);
  const summary = webhookSummary(event.kind, data);
  const url = typeof data.url === 'string' ? data.url : undefined;
  switch (target.format) {
    case 'generic':
      return { url: target.url, headers: json, body: JSON.stringify(webhookBody(event, baseUrl)) };
    case 'slack': {
      const text =
        cutText(slackEscape(summary), SLACK_TEXT_LIMIT - 200) + (url ? ` <${slackUrl(url)}|Open in Keel>` : '');
      return { url: target.url, headers: json, body: JSON.stringify({ text }) };
    }
    case 'pagerduty': {
      const alert = webhookAlert(event);
      const base = { routing_key: target.routingKey ?? '', dedup_key: cutText(alert.key, PAGERDUTY_LIMITS.dedupKey) };
      if (alert.action === 'close')
        return { url: target.url, headers: json, body: JSON.stringify({ ...base, event_action: 'resolve' }) };
      const body = {
        ...base,
        event_action: 'trigger',
        payload: {
          summary: cutText(summary, PAGERDUTY_LIMITS.summary),
          source: baseUrl ? new URL(baseUrl).host : 'keel',
          severity: alert.severity,
          timestamp: event.createdAt.toISOString(),
          component: alert.component,
          group: 'keel',
          class: event.kind,
          custom_details: data,
        },
        ...(url ? { links: [{ href: url, text: 'Open in Keel' }] } : {}),
        client: 'Keel',
        ...(baseUrl ? { client_url: new URL(baseUrl).toString() } : {}),
      };
      return { url: target.url, headers: json, body: JSON.stringify(body) };
    }
    case 'opsgenie': {
      const alert = webhookAlert(event);
      const headers = { ...json, authorization: `GenieKey ${target.apiKey ?? ''}` };
      const alias = cutText(alert.key, OPSGENIE_LIMITS.alias);
      if (alert.action === 'close') {
        // Closed by alias: POST <alerts URL>/<alias>/close?identifierType=alias.
        const close = new URL(target.url);
        close.pathname = `${close.pathname.replace(/\/+$/, '')}/${encodeURIComponent(alias)}/close`;
        close.searchParams.set('identifierType', 'alias');
        return {
          url: close.toString(),
          headers,
          body: JSON.stringify({
            source: 'Keel',
            note: cutText(summary + (url ? ` ${url}` : ''), OPSGENIE_LIMITS.note),
          }),
        };
      }
      const body = {
        message: cutText(summary, OPSGENIE_LIMITS.message),
        alias,
        description: cutText(summary + (url ? `\n\n${url}` : ''), OPSGENIE_LIMITS.description),
        details: opsgenieDetails(data),
        tags: ['keel', event.kind],
        entity: cutText(alert.component, OPSGENIE_LIMITS.entity),
        source: 'Keel',
        priority: alert.priority,
      };
      return { url: target.url, headers, body: JSON.stringify(body) };
    }
  }
}
