import 'server-only';
import type { WebhookEndpointSetting } from '../config/webhooks';
import { webhookRequest } from '../domain/webhook-formats';
import {
  isWebhookKind,
  LEGACY_WEBHOOK_HEADERS,
  legacyWebhookSignature,
  standardWebhookSignature,
  WEBHOOK_HEADERS,
  webhookMessageId,
  webhookSigningKey,
} from '../domain/webhook';
import type { ClaimedWebhookDelivery, WebhookOutcome, WebhookSender } from '../ports/webhook-deliveries';

const SEND_TIMEOUT_MS = 10_000;

/** Why a send failed, in a few words: never a URL, a header or the response body. */
function failureText(error: unknown): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) return 'timeout';
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const code = typeof cause === 'object' && cause !== null ? (cause as { code?: unknown }).code : undefined;
  return typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code) ? `network error ${code}` : 'network error';
}

/**
 * Posts deliveries over HTTP: the body in the endpoint's format, Standard Webhooks
 * signature headers when the endpoint has a secret (plus Keel's earlier headers on generic
 * endpoints), 10 s timeout, no redirects followed. A 2xx is delivered.
 */
export function httpWebhookSender(options: {
  endpoints: readonly WebhookEndpointSetting[];
  baseUrl: string | undefined;
  fetch?: typeof fetch;
}): WebhookSender {
  const byName = new Map(options.endpoints.map((e) => [e.name, e]));
  const send = options.fetch ?? fetch;
  return {
    knows: (endpoint) => byName.has(endpoint),
    async send(delivery: ClaimedWebhookDelivery): Promise<WebhookOutcome> {
      const endpoint = byName.get(delivery.endpoint);
      if (!endpoint) return { httpStatus: null, error: 'endpoint not configured' };
      const { kind } = delivery.event;
      if (!isWebhookKind(kind)) return { httpStatus: null, error: 'unknown event kind' };
      const request = webhookRequest({ ...delivery.event, kind }, endpoint, options.baseUrl);
      const headers: Record<string, string> = { ...request.headers, 'user-agent': 'Keel-Webhooks/2' };
      if (endpoint.secret !== null) {
        const key = webhookSigningKey(endpoint.secret);
        if (!key.ok) return { httpStatus: null, error: 'invalid signing secret' };
        const id = webhookMessageId(delivery.event.id);
        const timestamp = Math.floor(Date.now() / 1000);
        headers[WEBHOOK_HEADERS.id] = id;
        headers[WEBHOOK_HEADERS.timestamp] = String(timestamp);
        headers[WEBHOOK_HEADERS.signature] = standardWebhookSignature(key.value, id, timestamp, request.body);
        if (endpoint.format === 'generic') {
          headers[LEGACY_WEBHOOK_HEADERS.id] = id;
          headers[LEGACY_WEBHOOK_HEADERS.timestamp] = String(timestamp);
          headers[LEGACY_WEBHOOK_HEADERS.signature] = legacyWebhookSignature(key.value, timestamp, request.body);
        }
      }
      try {
        const response = await send(request.url, {
          method: 'POST',
          redirect: 'manual',
          signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
          headers,
          body: request.body,
        });
        await response.body?.cancel().catch(() => {});
        return {
          httpStatus: response.status,
          error: response.status >= 200 && response.status <= 299 ? null : `HTTP ${response.status}`,
        };
      } catch (error) {
        return { httpStatus: null, error: failureText(error) };
      }
    },
  };
}
