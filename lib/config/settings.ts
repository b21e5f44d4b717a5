import { createHmac } from 'node:crypto';
import { isIP } from 'node:net';
import { availableParallelism, hostname } from 'node:os';
import type { z } from 'zod';
import type { DeepLinkTemplates } from '../domain/deep-links';
import { err, ok, type Result } from '../domain/result';
import { parseTrustedProxies } from '../http/client-address';
import { deepLinkFields, deepLinkRules, toDeepLinkTemplates } from './deep-links';
import { signInFields, signInRules, toSignInSettings, type SignInSettings } from './oidc';
import type { SettingError } from './setting-error';
import {
  flagSetting,
  listSetting,
  rawSetting,
  readWholeNumber,
  refuseNamed,
  refuseSetting,
  settingErrorsOf,
  settingsObject,
  textSetting,
  wholeNumberSetting,
  type Env,
} from './setting-schema';
import { toWebhookSettings, webhookFields, webhookRules, type WebhookSettings } from './webhooks';

export type { SettingError } from './setting-error';

/** Keel's settings (docs/configuration.md), read once from the environment at start. */
export interface Settings {
  databaseUrl: string | undefined;
  /**
   * A streaming replica that list pages may read from (DATABASE_READ_URL). Never used
   * for a decision: takeovers, replays and anything that must read its own write go
   * to DATABASE_URL.
   */
  databaseReadUrl: string | undefined;
  /** Lists read from the replica only while it is at most this far behind (KEEL_READ_MAX_LAG_MS). */
  readMaxLagMs: number;
  /** This process among several Keel instances: shown on the jobs it works (KEEL_INSTANCE_ID). */
  instanceId: string;
  /** How long a bulk job stays with the instance working it after its last batch (KEEL_WORKER_LEASE_MS). */
  workerLeaseMs: number;
  /** HTTP processes serving the port, one per core at most useful (KEEL_HTTP_PROCESSES; `auto`: one per core). */
  httpProcesses: number;
  port: number;
  /**
   * The address the HTTP server listens on (KEEL_HOST): loopback only in demo mode, whose
   * users have a known password; otherwise every interface (undefined).
   */
  host: string | undefined;
  demo: boolean;
  demoRuntime: boolean;
  demoPassword: string;
  checkpointKey: Buffer | undefined;
  authSecret: string | undefined;
  staleThresholdMs: number;
  maxClockSkewMs: number;
  proposalTtlMs: number;
  orchestrationLeaseMs: number;
  signInPerMinute: number;
  baseUrl: string | undefined;
  trustedProxies: string[];
  metricsToken: string | undefined;
  webhooks: WebhookSettings;
  /** Single sign-on (KEEL_OIDC_*) and whether local passwords are on (KEEL_LOCAL_SIGN_IN). */
  signIn: SignInSettings;
  /** Links to the team's logs and traces per kind of id (KEEL_LOG_URL_TEMPLATE_*, KEEL_TRACE_URL_TEMPLATE_*). */
  deepLinks: DeepLinkTemplates;
  /**
   * Where the team reads this repository (KEEL_DOCS_URL, no trailing slash): runbook links append `docs/alerts.md#...`.
   */
  docsUrl: string | undefined;
}

const INSTANCE_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** This process's name among Keel instances when KEEL_INSTANCE_ID is unset: host and process id. */
export function defaultInstanceId(): string {
  return `${hostname()
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .slice(0, 50)}-${process.pid}`;
}

/** The default of KEEL_WORKER_LEASE_MS. */
export const DEFAULT_WORKER_LEASE_MS = 30_000;

/** The most HTTP processes one server starts. */
export const MAX_HTTP_PROCESSES = 64;

/**
 * The longest KEEL_INSTANCE_ID that still fits 64 characters once a process adds `-<n>` (n up to MAX_HTTP_PROCESSES).
 */
const NAMED_INSTANCE_MAX = 64 - `-${MAX_HTTP_PROCESSES}`.length;

/** The demo users' published password (README), when KEEL_DEMO_PASSWORD is unset. */
export const DEMO_PASSWORD = 'keel-demo';
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '::1', 'localhost']);
const HOST_NAME = /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
const CHECKPOINT_KEY = /^(?:[0-9a-fA-F]{2}){32,}$/;
const POSTGRES_URL = /^postgres(?:ql)?:\/\//;

const isHost = (host: string): boolean => isIP(host) !== 0 || HOST_NAME.test(host);

/** Text of at least `min` characters (a secret or a token); a shorter one is refused with `message`. */
const secretSetting = (min: number, message: string) =>
  textSetting.transform((value, ctx) =>
    value !== undefined && value.length < min ? refuseSetting(ctx, message, value) : value,
  );

/**
 * The checkpoint key: at least 32 bytes as hex. Unset is undefined; a value that is not a key is null,
 * so the rule about DATABASE_URL below knows it was given.
 */
const checkpointKeySetting = textSetting.transform((hex, ctx): Buffer | null | undefined => {
  if (hex === undefined) return undefined;
  if (CHECKPOINT_KEY.test(hex)) return Buffer.from(hex, 'hex');
  const message = 'KEEL_CHECKPOINT_KEY must be at least 32 bytes written as hex (64 or more hex digits)';
  return refuseSetting(ctx, message, null);
});

const HTTP_PROCESSES = {
  name: 'KEEL_HTTP_PROCESSES',
  fallback: 1,
  min: 1,
  max: MAX_HTTP_PROCESSES,
  describe: `1 to ${MAX_HTTP_PROCESSES} processes, or auto for one per core`,
};

/** KEEL_HTTP_PROCESSES: unset is 1, `auto` is one per core the machine offers, else 1 to 64. */
const httpProcessesSetting = rawSetting.transform((raw, ctx) =>
  raw?.trim() === 'auto'
    ? Math.min(MAX_HTTP_PROCESSES, Math.max(1, availableParallelism()))
    : readWholeNumber(raw, HTTP_PROCESSES, ctx),
);

/**
 * Every setting Keel reads from the environment (docs/configuration.md), one field per variable:
 * its coercion, its default and its bounds, with a message naming the variable when it is refused.
 * The webhook, single sign-on and deep link fields are their files' (webhooks.ts, oidc.ts,
 * deep-links.ts), which may also be checked alone.
 */
const coreFields = {
  DATABASE_URL: textSetting,
  DATABASE_READ_URL: textSetting.transform((url, ctx) =>
    url !== undefined && !POSTGRES_URL.test(url)
      ? refuseSetting(ctx, 'DATABASE_READ_URL must be a postgres:// URL of a streaming replica', url)
      : url,
  ),
  KEEL_READ_MAX_LAG_MS: wholeNumberSetting({
    name: 'KEEL_READ_MAX_LAG_MS',
    fallback: 5_000,
    min: 0,
    max: 600_000,
    describe: 'how far behind the read replica may be, 0 to 600000 ms',
  }),
  KEEL_CHECKPOINT_KEY: checkpointKeySetting,
  KEEL_AUTH_SECRET: secretSetting(32, 'KEEL_AUTH_SECRET must be at least 32 characters'),
  // As given, white space and all: it is a password.
  KEEL_DEMO_PASSWORD: rawSetting.transform((password, ctx) => {
    const value = password ?? DEMO_PASSWORD;
    if (value.length < 8 || value.length > 128)
      refuseSetting(ctx, 'KEEL_DEMO_PASSWORD must be 8 to 128 characters', value);
    return value;
  }),
  KEEL_METRICS_TOKEN: secretSetting(32, 'KEEL_METRICS_TOKEN must be at least 32 characters'),
  KEEL_BASE_URL: textSetting.transform((url, ctx) =>
    url !== undefined && !URL.canParse(url) ? refuseSetting(ctx, `KEEL_BASE_URL=${url} is not a URL`, url) : url,
  ),
  KEEL_DOCS_URL: textSetting.transform((url, ctx) => {
    const docsUrl = url?.replace(/\/+$/, '') || undefined;
    if (docsUrl !== undefined && !(/^https?:\/\//.test(docsUrl) && URL.canParse(docsUrl)))
      refuseSetting(ctx, 'KEEL_DOCS_URL must be an http or https URL', docsUrl);
    return docsUrl;
  }),
  KEEL_HTTP_PROCESSES: httpProcessesSetting,
  // Set by the primary process for each HTTP process it forks (lib/cli/http-primary.ts).
  KEEL_HTTP_PROCESS_INDEX: rawSetting,
  KEEL_INSTANCE_ID: textSetting.transform((id, ctx) =>
    id !== undefined && !INSTANCE_ID.test(id)
      ? refuseSetting(ctx, 'KEEL_INSTANCE_ID must be 1 to 64 letters, digits, dots, dashes or underscores', id)
      : id,
  ),
  KEEL_WORKER_LEASE_MS: wholeNumberSetting({
    name: 'KEEL_WORKER_LEASE_MS',
    fallback: DEFAULT_WORKER_LEASE_MS,
    min: 1_000,
    max: 600_000,
    describe: 'a bulk job lease, 1 second to 10 minutes',
  }),
  PORT: wholeNumberSetting({ name: 'PORT', fallback: 3000, min: 1, max: 65_535, describe: 'a TCP port' }),
  KEEL_HOST: textSetting.transform((host, ctx) =>
    host !== undefined && !isHost(host)
      ? refuseSetting(ctx, `KEEL_HOST=${host} is not an IP address or host name`, undefined)
      : host,
  ),
  // Unset: demo mode exactly when there is no DATABASE_URL.
  KEEL_DEMO: flagSetting('KEEL_DEMO'),
  KEEL_DEMO_RUNTIME: flagSetting('KEEL_DEMO_RUNTIME'),
  KEEL_STALE_THRESHOLD_MS: wholeNumberSetting({
    name: 'KEEL_STALE_THRESHOLD_MS',
    fallback: 900_000,
    min: 60_000,
    max: 86_400_000,
    describe: '1 minute to 24 hours',
  }),
  KEEL_MAX_CLOCK_SKEW_MS: wholeNumberSetting({
    name: 'KEEL_MAX_CLOCK_SKEW_MS',
    fallback: 5_000,
    min: 100,
    max: 60_000,
    describe: '100 ms to 60 seconds',
  }),
  KEEL_PROPOSAL_TTL_MS: wholeNumberSetting({
    name: 'KEEL_PROPOSAL_TTL_MS',
    fallback: 900_000,
    min: 60_000,
    max: 86_400_000,
    describe: '1 minute to 24 hours',
  }),
  KEEL_ORCHESTRATION_LEASE_MS: wholeNumberSetting({
    name: 'KEEL_ORCHESTRATION_LEASE_MS',
    fallback: 300_000,
    min: 1_000,
    max: 86_400_000,
    describe: '1 second to 24 hours',
  }),
  KEEL_SIGNIN_RATE_LIMIT: wholeNumberSetting({
    name: 'KEEL_SIGNIN_RATE_LIMIT',
    fallback: 10,
    min: 1,
    max: 10_000,
    describe: 'sign-in attempts per client address per minute, 1 to 10000',
  }),
  KEEL_TRUSTED_PROXIES: listSetting.transform((proxies, ctx) => {
    const { invalid } = parseTrustedProxies(proxies);
    if (invalid.length > 0)
      refuseSetting(ctx, `KEEL_TRUSTED_PROXIES: not an address or CIDR range: ${invalid.join(', ')}`, proxies);
    return proxies;
  }),
};

type CoreFields = z.output<z.ZodObject<typeof coreFields>>;

const isDemo = (fields: CoreFields): boolean => fields.KEEL_DEMO ?? fields.DATABASE_URL === undefined;

/** The rules between the core settings, each naming the setting to change. */
function coreRules(fields: CoreFields, ctx: z.RefinementCtx): void {
  if (fields.DATABASE_URL !== undefined && fields.KEEL_CHECKPOINT_KEY === undefined) {
    refuseNamed(
      ctx,
      'KEEL_CHECKPOINT_KEY',
      'DATABASE_URL is set but KEEL_CHECKPOINT_KEY is not: orchestration checkpoints cannot be authenticated. ' +
        'Set KEEL_CHECKPOINT_KEY to 32 random bytes in hex (for example: openssl rand -hex 32).',
    );
  }
  const readUrl = fields.DATABASE_READ_URL;
  if (readUrl !== undefined && POSTGRES_URL.test(readUrl) && fields.DATABASE_URL === undefined) {
    refuseNamed(
      ctx,
      'DATABASE_READ_URL',
      'DATABASE_READ_URL is set but DATABASE_URL is not: a replica needs its primary',
    );
  }
  const id = fields.KEEL_INSTANCE_ID;
  // Each process works bulk jobs as `<id>-<n>` (lib/cli/http-primary.ts).
  if (
    id !== undefined &&
    INSTANCE_ID.test(id) &&
    fields.KEEL_HTTP_PROCESSES > 1 &&
    fields.KEEL_HTTP_PROCESS_INDEX === undefined &&
    id.length > NAMED_INSTANCE_MAX
  ) {
    refuseNamed(
      ctx,
      'KEEL_INSTANCE_ID',
      `KEEL_INSTANCE_ID must be at most ${NAMED_INSTANCE_MAX} characters with KEEL_HTTP_PROCESSES above 1: ` +
        `each process adds -<n>`,
    );
  }
  // Demo mode seeds users whose password is printed in the README: another address than loopback
  // needs a password of the operator's own.
  const host = fields.KEEL_HOST;
  if (
    isDemo(fields) &&
    host !== undefined &&
    !LOOPBACK_HOSTS.has(host) &&
    fields.KEEL_DEMO_PASSWORD === DEMO_PASSWORD
  ) {
    refuseNamed(
      ctx,
      'KEEL_HOST',
      `KEEL_HOST=${host} with demo mode: the demo users' password is the published keel-demo; ` +
        `set KEEL_DEMO_PASSWORD to one of your own, or KEEL_DEMO=0`,
    );
  }
}

/**
 * The session-signing secret: KEEL_AUTH_SECRET when given, otherwise derived from the
 * checkpoint key under its own label, so one secret to provision still yields two
 * independent keys.
 */
export function deriveAuthSecret(checkpointKey: Buffer): string {
  return createHmac('sha256', checkpointKey).update('keel/auth-secret/v1').digest('hex');
}

/** The one schema of Keel's settings: every field, then every rule between them, then the settings. */
const settingsSchema = settingsObject(
  { ...coreFields, ...webhookFields, ...signInFields, ...deepLinkFields },
  (fields, ctx, env) => {
    coreRules(fields, ctx);
    webhookRules(fields, ctx, env);
    signInRules(fields, ctx);
    deepLinkRules(fields, ctx, env);
  },
).transform((fields): Settings => {
  const demo = isDemo(fields);
  const checkpointKey = fields.KEEL_CHECKPOINT_KEY ?? undefined;
  return {
    databaseUrl: fields.DATABASE_URL,
    databaseReadUrl: fields.DATABASE_READ_URL,
    readMaxLagMs: fields.KEEL_READ_MAX_LAG_MS,
    instanceId: fields.KEEL_INSTANCE_ID ?? defaultInstanceId(),
    workerLeaseMs: fields.KEEL_WORKER_LEASE_MS,
    httpProcesses: fields.KEEL_HTTP_PROCESSES,
    port: fields.PORT,
    // Loopback only in demo mode unless told otherwise; every interface without it.
    host: demo ? (fields.KEEL_HOST ?? '127.0.0.1') : fields.KEEL_HOST,
    demo,
    demoRuntime: fields.KEEL_DEMO_RUNTIME ?? true,
    demoPassword: fields.KEEL_DEMO_PASSWORD,
    checkpointKey,
    authSecret: fields.KEEL_AUTH_SECRET ?? (checkpointKey ? deriveAuthSecret(checkpointKey) : undefined),
    staleThresholdMs: fields.KEEL_STALE_THRESHOLD_MS,
    maxClockSkewMs: fields.KEEL_MAX_CLOCK_SKEW_MS,
    proposalTtlMs: fields.KEEL_PROPOSAL_TTL_MS,
    orchestrationLeaseMs: fields.KEEL_ORCHESTRATION_LEASE_MS,
    signInPerMinute: fields.KEEL_SIGNIN_RATE_LIMIT,
    baseUrl: fields.KEEL_BASE_URL,
    trustedProxies: fields.KEEL_TRUSTED_PROXIES,
    metricsToken: fields.KEEL_METRICS_TOKEN,
    webhooks: toWebhookSettings(fields, fields as Env),
    signIn: toSignInSettings(fields),
    deepLinks: toDeepLinkTemplates(fields),
    docsUrl: fields.KEEL_DOCS_URL,
  };
});

/** Keel's settings from the environment, or every refused setting, each naming its variable. */
export function parseSettings(env: Env): Result<Settings, SettingError[]> {
  const parsed = settingsSchema.safeParse(env);
  return parsed.success ? ok(parsed.data) : err(settingErrorsOf(parsed.error));
}

export function formatSettingErrors(errors: SettingError[]): string {
  return ['Keel cannot start: invalid settings', ...errors.map((e) => `  - ${e.message}`)].join('\n');
}
