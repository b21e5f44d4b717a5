import type { SettingError } from './setting-error';

export interface WebhookEndpointSetting {
  name: string;
  url: string;
  secret: string;
}

export interface WebhookSettings {
  endpoints: WebhookEndpointSetting[];
  /** Dead letters of one reason within the window that make a `dead_letters.rising` event. */
  deadLetterThreshold: number;
  deadLetterWindowMs: number;
}

type Env = Record<string, string | undefined>;
const NAME = /^[a-z0-9_-]{1,32}$/;

function readPositive(env: Env, name: string, fallback: number, min: number, max: number, errors: SettingError[]): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max) {
    errors.push({ name, message: `${name}=${raw} must be a whole number from ${min} to ${max}` });
    return fallback;
  }
  return value;
}

/**
 * `KEEL_WEBHOOK_URLS=ops=https://chat.example/hooks/T0,pager=https://pager.example/keel`: named
 * endpoints, each signed with its own secret `KEEL_WEBHOOK_SECRET_<NAME>` (name upper-cased,
 * `-` as `_`; 32+ characters). URLs must be http(s); secrets never leave the server.
 */
export function parseWebhookSettings(env: Env, errors: SettingError[]): WebhookSettings {
  const endpoints: WebhookEndpointSetting[] = [];
  for (const entry of (env.KEEL_WEBHOOK_URLS ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    const at = entry.indexOf('=');
    const name = at > 0 ? entry.slice(0, at) : '';
    const url = entry.slice(at + 1);
    if (!NAME.test(name)) {
      errors.push({ name: 'KEEL_WEBHOOK_URLS', message: 'KEEL_WEBHOOK_URLS entries are name=url, with a name of 1 to 32 of a-z, 0-9, _ and -' });
      continue;
    }
    if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
      errors.push({ name: 'KEEL_WEBHOOK_URLS', message: `KEEL_WEBHOOK_URLS: the URL of ${name} is not an http(s) URL` });
      continue;
    }
    if (endpoints.some((e) => e.name === name)) {
      errors.push({ name: 'KEEL_WEBHOOK_URLS', message: `KEEL_WEBHOOK_URLS names ${name} twice` });
      continue;
    }
    const secretName = `KEEL_WEBHOOK_SECRET_${name.toUpperCase().replaceAll('-', '_')}`;
    const secret = env[secretName]?.trim() ?? '';
    if (secret.length < 32) {
      errors.push({ name: secretName, message: `${secretName} must be set to 32 or more characters to sign the deliveries to ${name}` });
      continue;
    }
    endpoints.push({ name, url, secret });
  }
  return {
    endpoints,
    deadLetterThreshold: readPositive(env, 'KEEL_DEAD_LETTER_ALERT_THRESHOLD', 50, 1, 1_000_000, errors),
    deadLetterWindowMs: readPositive(env, 'KEEL_DEAD_LETTER_ALERT_WINDOW_MS', 900_000, 60_000, 86_400_000, errors),
  };
}
