import { isWebhookFormat, WEBHOOK_FORMATS, type WebhookFormat } from '../domain/webhook-formats';
import { webhookSigningKey } from '../domain/webhook';
import type { SettingError } from './setting-error';

export interface WebhookEndpointSetting {
  name: string;
  url: string;
  format: WebhookFormat;
  /**
   * KEEL_WEBHOOK_SECRET_<NAME> as given: `whsec_<base64>` (Standard Webhooks) or a plain
   * secret of 32+ characters. Required for generic endpoints; optional for the others,
   * whose receivers authenticate Keel by their own keys.
   */
  secret: string | null;
  /** PagerDuty: KEEL_WEBHOOK_ROUTING_KEY_<NAME>. */
  routingKey: string | null;
  /** Opsgenie: KEEL_WEBHOOK_API_KEY_<NAME>. */
  apiKey: string | null;
}

export interface WebhookSettings {
  endpoints: WebhookEndpointSetting[];
  /** Dead letters of one reason within the window that make a `dead_letters.rising` event. */
  deadLetterThreshold: number;
  deadLetterWindowMs: number;
}

type Env = Record<string, string | undefined>;
const NAME = /^[a-z0-9_-]{1,32}$/;
const ROUTING_KEY = /^[A-Za-z0-9]{32}$/;
const API_KEY = /^[A-Za-z0-9-]{8,128}$/;
// The per-endpoint settings that exist only for some formats; one naming no endpoint is a typo.
const PER_ENDPOINT = ['KEEL_WEBHOOK_FORMAT_', 'KEEL_WEBHOOK_ROUTING_KEY_', 'KEEL_WEBHOOK_API_KEY_'] as const;

function readPositive(
  env: Env,
  name: string,
  fallback: number,
  min: number,
  max: number,
  errors: SettingError[],
): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max) {
    errors.push({ name, message: `${name}=${raw} must be a whole number from ${min} to ${max}` });
    return fallback;
  }
  return value;
}

/** `on-call` → `ON_CALL`: the suffix of an endpoint's own settings. */
export const webhookEnvSuffix = (name: string): string => name.toUpperCase().replaceAll('-', '_');

/**
 * `KEEL_WEBHOOK_URLS=ops=https://chat.example/hooks/T0,pager=https://events.pagerduty.com/v2/enqueue`:
 * named endpoints, each with its format (`KEEL_WEBHOOK_FORMAT_<NAME>`, generic by default),
 * its signing secret (`KEEL_WEBHOOK_SECRET_<NAME>`) and, for PagerDuty and Opsgenie, its key.
 * URLs must be http(s); secrets and keys never leave the server and never appear in an error.
 */
export function parseWebhookSettings(env: Env, errors: SettingError[]): WebhookSettings {
  const endpoints: WebhookEndpointSetting[] = [];
  const named = new Set<string>();
  for (const entry of (env.KEEL_WEBHOOK_URLS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const at = entry.indexOf('=');
    const name = at > 0 ? entry.slice(0, at) : '';
    const url = entry.slice(at + 1);
    if (!NAME.test(name)) {
      errors.push({
        name: 'KEEL_WEBHOOK_URLS',
        message: 'KEEL_WEBHOOK_URLS entries are name=url, with a name of 1 to 32 of a-z, 0-9, _ and -',
      });
      continue;
    }
    named.add(webhookEnvSuffix(name));
    if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
      errors.push({
        name: 'KEEL_WEBHOOK_URLS',
        message: `KEEL_WEBHOOK_URLS: the URL of ${name} is not an http(s) URL`,
      });
      continue;
    }
    if (endpoints.some((e) => e.name === name)) {
      errors.push({ name: 'KEEL_WEBHOOK_URLS', message: `KEEL_WEBHOOK_URLS names ${name} twice` });
      continue;
    }
    const endpoint = readEndpoint(env, name, url, errors);
    if (endpoint) endpoints.push(endpoint);
  }
  for (const key of Object.keys(env)) {
    const prefix = PER_ENDPOINT.find((p) => key.startsWith(p));
    if (prefix && env[key]?.trim() && !named.has(key.slice(prefix.length))) {
      errors.push({
        name: key,
        message:
          `${key} is set, but KEEL_WEBHOOK_URLS names no endpoint ` +
          `${key.slice(prefix.length).toLowerCase().replaceAll('_', '-')}`,
      });
    }
  }
  return {
    endpoints,
    deadLetterThreshold: readPositive(env, 'KEEL_DEAD_LETTER_ALERT_THRESHOLD', 50, 1, 1_000_000, errors),
    deadLetterWindowMs: readPositive(env, 'KEEL_DEAD_LETTER_ALERT_WINDOW_MS', 900_000, 60_000, 86_400_000, errors),
  };
}

/** The signing secrets a generic endpoint accepts, as a refusal names them. */
const SECRET_FORMS = 'a whsec_ secret, or 32 or more characters';

function readEndpoint(env: Env, name: string, url: string, errors: SettingError[]): WebhookEndpointSetting | null {
  const suffix = webhookEnvSuffix(name);
  const formatName = `KEEL_WEBHOOK_FORMAT_${suffix}`;
  const secretName = `KEEL_WEBHOOK_SECRET_${suffix}`;
  const routingName = `KEEL_WEBHOOK_ROUTING_KEY_${suffix}`;
  const apiKeyName = `KEEL_WEBHOOK_API_KEY_${suffix}`;
  const before = errors.length;

  const rawFormat = env[formatName]?.trim() || 'generic';
  const format = isWebhookFormat(rawFormat) ? rawFormat : null;
  if (!format)
    errors.push({
      name: formatName,
      message: `${formatName}=${rawFormat} is not a format: use one of ${WEBHOOK_FORMATS.join(', ')}`,
    });

  const secret = env[secretName]?.trim() || null;
  if (secret === null && (format === 'generic' || format === null)) {
    errors.push({
      name: secretName,
      message: `${secretName} must be set to sign the deliveries to ${name} (${SECRET_FORMS})`,
    });
  } else if (secret !== null) {
    const key = webhookSigningKey(secret);
    if (!key.ok) errors.push({ name: secretName, message: `${secretName}: ${key.error}` });
  }

  const routingKey = env[routingName]?.trim() || null;
  if (format === 'pagerduty' && !routingKey)
    errors.push({
      name: routingName,
      message: `${routingName} must be set: ${name} is a PagerDuty endpoint (its Events API v2 integration key)`,
    });
  else if (routingKey && format !== 'pagerduty')
    errors.push({
      name: routingName,
      message: `${routingName} is set, but ${name} is not a pagerduty endpoint (${formatName})`,
    });
  else if (routingKey && !ROUTING_KEY.test(routingKey))
    errors.push({
      name: routingName,
      message: `${routingName} must be PagerDuty's 32-character integration key (letters and digits)`,
    });

  const apiKey = env[apiKeyName]?.trim() || null;
  if (format === 'opsgenie' && !apiKey)
    errors.push({
      name: apiKeyName,
      message: `${apiKeyName} must be set: ${name} is an Opsgenie endpoint (its API integration key)`,
    });
  else if (apiKey && format !== 'opsgenie')
    errors.push({
      name: apiKeyName,
      message: `${apiKeyName} is set, but ${name} is not an opsgenie endpoint (${formatName})`,
    });
  else if (apiKey && !API_KEY.test(apiKey))
    errors.push({
      name: apiKeyName,
      message: `${apiKeyName} must be an Opsgenie API key (8 to 128 of letters, digits and -)`,
    });

  if (errors.length > before || !format) return null;
  return { name, url, format, secret, routingKey, apiKey };
}
