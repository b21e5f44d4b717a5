import type { z } from 'zod';
import { isWebhookFormat, WEBHOOK_FORMATS, type WebhookFormat } from '../domain/webhook-formats';
import { webhookSigningKey } from '../domain/webhook';
import type { SettingError } from './setting-error';
import {
  listSetting,
  parseSettingGroup,
  rawSetting,
  refuseNamed,
  refuseSetting,
  settingsObject,
  type Env,
} from './setting-schema';

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

const NAME = /^[a-z0-9_-]{1,32}$/;
const ROUTING_KEY = /^[A-Za-z0-9]{32}$/;
const API_KEY = /^[A-Za-z0-9-]{8,128}$/;
// The per-endpoint settings that exist only for some formats; one naming no endpoint is a typo.
const PER_ENDPOINT = ['KEEL_WEBHOOK_FORMAT_', 'KEEL_WEBHOOK_ROUTING_KEY_', 'KEEL_WEBHOOK_API_KEY_'] as const;

/** A whole number from `min` to `max`; unset or blank is the fallback, and so is a refused value. */
const boundedSetting = (name: string, fallback: number, min: number, max: number) =>
  rawSetting.transform((raw, ctx) => {
    const text = raw?.trim();
    if (!text) return fallback;
    const value = Number(text);
    if (!/^\d+$/.test(text) || value < min || value > max)
      return refuseSetting(ctx, `${name}=${text} must be a whole number from ${min} to ${max}`, fallback);
    return value;
  });

/** `on-call` → `ON_CALL`: the suffix of an endpoint's own settings. */
export const webhookEnvSuffix = (name: string): string => name.toUpperCase().replaceAll('-', '_');

/**
 * The webhook fields of the settings schema (lib/config/settings.ts):
 * `KEEL_WEBHOOK_URLS=ops=https://chat.example/hooks/T0,pager=https://events.pagerduty.com/v2/enqueue`
 * names the endpoints, each with its format (`KEEL_WEBHOOK_FORMAT_<NAME>`, generic by default), its
 * signing secret (`KEEL_WEBHOOK_SECRET_<NAME>`) and, for PagerDuty and Opsgenie, its key: settings
 * named after an endpoint, read by the rules. URLs must be http(s); secrets and keys never leave
 * the server and never appear in an error.
 */
export const webhookFields = {
  KEEL_WEBHOOK_URLS: listSetting,
  KEEL_DEAD_LETTER_ALERT_THRESHOLD: boundedSetting('KEEL_DEAD_LETTER_ALERT_THRESHOLD', 50, 1, 1_000_000),
  KEEL_DEAD_LETTER_ALERT_WINDOW_MS: boundedSetting('KEEL_DEAD_LETTER_ALERT_WINDOW_MS', 900_000, 60_000, 86_400_000),
};

export type WebhookFields = z.output<z.ZodObject<typeof webhookFields>>;

type Refuse = (name: string, message: string) => void;

/** The endpoints KEEL_WEBHOOK_URLS names, each with its own settings; each refusal goes to `refuse`. */
function readEndpoints(entries: string[], env: Env, refuse: Refuse): WebhookEndpointSetting[] {
  const endpoints: WebhookEndpointSetting[] = [];
  const named = new Set<string>();
  for (const entry of entries) {
    const at = entry.indexOf('=');
    const name = at > 0 ? entry.slice(0, at) : '';
    const url = entry.slice(at + 1);
    if (!NAME.test(name)) {
      refuse(
        'KEEL_WEBHOOK_URLS',
        'KEEL_WEBHOOK_URLS entries are name=url, with a name of 1 to 32 of a-z, 0-9, _ and -',
      );
      continue;
    }
    named.add(webhookEnvSuffix(name));
    if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
      refuse('KEEL_WEBHOOK_URLS', `KEEL_WEBHOOK_URLS: the URL of ${name} is not an http(s) URL`);
      continue;
    }
    if (endpoints.some((e) => e.name === name)) {
      refuse('KEEL_WEBHOOK_URLS', `KEEL_WEBHOOK_URLS names ${name} twice`);
      continue;
    }
    const endpoint = readEndpoint(env, name, url, refuse);
    if (endpoint) endpoints.push(endpoint);
  }
  for (const key of Object.keys(env)) {
    const prefix = PER_ENDPOINT.find((p) => key.startsWith(p));
    if (prefix && env[key]?.trim() && !named.has(key.slice(prefix.length))) {
      const endpoint = key.slice(prefix.length).toLowerCase().replaceAll('_', '-');
      refuse(key, `${key} is set, but KEEL_WEBHOOK_URLS names no endpoint ${endpoint}`);
    }
  }
  return endpoints;
}

/** The rules of the webhook settings: each endpoint's own settings, and none set for an endpoint not named. */
export function webhookRules(fields: WebhookFields, ctx: z.RefinementCtx, env: Env): void {
  readEndpoints(fields.KEEL_WEBHOOK_URLS, env, (name, message) => refuseNamed(ctx, name, message));
}

/** What the webhook worker and the Webhooks page read, once the fields and their rules hold. */
export function toWebhookSettings(fields: WebhookFields, env: Env): WebhookSettings {
  return {
    endpoints: readEndpoints(fields.KEEL_WEBHOOK_URLS, env, () => {}),
    deadLetterThreshold: fields.KEEL_DEAD_LETTER_ALERT_THRESHOLD,
    deadLetterWindowMs: fields.KEEL_DEAD_LETTER_ALERT_WINDOW_MS,
  };
}

const webhookSettingsSchema = settingsObject(webhookFields, webhookRules).transform((env) =>
  toWebhookSettings(env, env as Env),
);

/** The webhook settings alone (the worker process of a test), by the same fields and rules as the whole schema. */
export function parseWebhookSettings(env: Env, errors: SettingError[]): WebhookSettings {
  return parseSettingGroup(webhookSettingsSchema, env, errors, {
    endpoints: [],
    deadLetterThreshold: 50,
    deadLetterWindowMs: 900_000,
  });
}

/** The signing secrets a generic endpoint accepts, as a refusal names them. */
const SECRET_FORMS = 'a whsec_ secret, or 32 or more characters';

function readEndpoint(env: Env, name: string, url: string, refuse: Refuse): WebhookEndpointSetting | null {
  const suffix = webhookEnvSuffix(name);
  const formatName = `KEEL_WEBHOOK_FORMAT_${suffix}`;
  const secretName = `KEEL_WEBHOOK_SECRET_${suffix}`;
  const routingName = `KEEL_WEBHOOK_ROUTING_KEY_${suffix}`;
  const apiKeyName = `KEEL_WEBHOOK_API_KEY_${suffix}`;
  let refused = false;
  const refuseHere: Refuse = (setting, message) => {
    refused = true;
    refuse(setting, message);
  };

  const rawFormat = env[formatName]?.trim() || 'generic';
  const format = isWebhookFormat(rawFormat) ? rawFormat : null;
  if (!format)
    refuseHere(formatName, `${formatName}=${rawFormat} is not a format: use one of ${WEBHOOK_FORMATS.join(', ')}`);

  const secret = env[secretName]?.trim() || null;
  if (secret === null && (format === 'generic' || format === null)) {
    refuseHere(secretName, `${secretName} must be set to sign the deliveries to ${name} (${SECRET_FORMS})`);
  } else if (secret !== null) {
    const key = webhookSigningKey(secret);
    if (!key.ok) refuseHere(secretName, `${secretName}: ${key.error}`);
  }

  const routingKey = env[routingName]?.trim() || null;
  if (format === 'pagerduty' && !routingKey)
    refuseHere(
      routingName,
      `${routingName} must be set: ${name} is a PagerDuty endpoint (its Events API v2 integration key)`,
    );
  else if (routingKey && format !== 'pagerduty')
    refuseHere(routingName, `${routingName} is set, but ${name} is not a pagerduty endpoint (${formatName})`);
  else if (routingKey && !ROUTING_KEY.test(routingKey))
    refuseHere(routingName, `${routingName} must be PagerDuty's 32-character integration key (letters and digits)`);

  const apiKey = env[apiKeyName]?.trim() || null;
  if (format === 'opsgenie' && !apiKey)
    refuseHere(apiKeyName, `${apiKeyName} must be set: ${name} is an Opsgenie endpoint (its API integration key)`);
  else if (apiKey && format !== 'opsgenie')
    refuseHere(apiKeyName, `${apiKeyName} is set, but ${name} is not an opsgenie endpoint (${formatName})`);
  else if (apiKey && !API_KEY.test(apiKey))
    refuseHere(apiKeyName, `${apiKeyName} must be an Opsgenie API key (8 to 128 of letters, digits and -)`);

  if (refused || !format) return null;
  return { name, url, format, secret, routingKey, apiKey };
}
