import { createHmac } from 'node:crypto';
import { isIP } from 'node:net';
import { availableParallelism, hostname } from 'node:os';
import { err, ok, type Result } from '../domain/result';
import { parseTrustedProxies } from '../http/client-address';
import type { DeepLinkTemplates } from '../domain/deep-links';
import { parseDeepLinkSettings } from './deep-links';
import { parseSignInSettings, type SignInSettings } from './oidc';
import type { SettingError } from './setting-error';
import { parseWebhookSettings, type WebhookSettings } from './webhooks';

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
}

type Env = Record<string, string | undefined>;

const INSTANCE_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** This process's name among Keel instances when KEEL_INSTANCE_ID is unset: host and process id. */
export function defaultInstanceId(): string {
  return `${hostname()
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .slice(0, 50)}-${process.pid}`;
}

/** The default of KEEL_WORKER_LEASE_MS. */
export const DEFAULT_WORKER_LEASE_MS = 30_000;

interface IntegerBound {
  name: string;
  fallback: number;
  min: number;
  max: number;
  describe: string;
}

const INTEGER_SETTINGS = {
  port: { name: 'PORT', fallback: 3000, min: 1, max: 65_535, describe: 'a TCP port' },
  staleThresholdMs: {
    name: 'KEEL_STALE_THRESHOLD_MS',
    fallback: 900_000,
    min: 60_000,
    max: 86_400_000,
    describe: '1 minute to 24 hours',
  },
  maxClockSkewMs: {
    name: 'KEEL_MAX_CLOCK_SKEW_MS',
    fallback: 5_000,
    min: 100,
    max: 60_000,
    describe: '100 ms to 60 seconds',
  },
  proposalTtlMs: {
    name: 'KEEL_PROPOSAL_TTL_MS',
    fallback: 900_000,
    min: 60_000,
    max: 86_400_000,
    describe: '1 minute to 24 hours',
  },
  orchestrationLeaseMs: {
    name: 'KEEL_ORCHESTRATION_LEASE_MS',
    fallback: 300_000,
    min: 1_000,
    max: 86_400_000,
    describe: '1 second to 24 hours',
  },
  readMaxLagMs: {
    name: 'KEEL_READ_MAX_LAG_MS',
    fallback: 5_000,
    min: 0,
    max: 600_000,
    describe: 'how far behind the read replica may be, 0 to 600000 ms',
  },
  workerLeaseMs: {
    name: 'KEEL_WORKER_LEASE_MS',
    fallback: DEFAULT_WORKER_LEASE_MS,
    min: 1_000,
    max: 600_000,
    describe: 'a bulk job lease, 1 second to 10 minutes',
  },
  signInPerMinute: {
    name: 'KEEL_SIGNIN_RATE_LIMIT',
    fallback: 10,
    min: 1,
    max: 10_000,
    describe: 'sign-in attempts per client address per minute, 1 to 10000',
  },
} satisfies Record<string, IntegerBound>;

function readInteger(env: Env, bound: IntegerBound, errors: SettingError[]): number {
  const raw = env[bound.name]?.trim();
  if (raw === undefined || raw === '') return bound.fallback;
  if (!/^\d+$/.test(raw)) {
    errors.push({ name: bound.name, message: `${bound.name}=${raw} is not a whole number (${bound.describe})` });
    return bound.fallback;
  }
  const value = Number(raw);
  if (value < bound.min) {
    errors.push({ name: bound.name, message: `${bound.name}=${raw} is below ${bound.min} (${bound.describe})` });
  } else if (value > bound.max) {
    errors.push({ name: bound.name, message: `${bound.name}=${raw} is above ${bound.max} (${bound.describe})` });
  }
  return value;
}

function readFlag(env: Env, name: string, fallback: boolean, errors: SettingError[]): boolean {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  if (raw === '1' || raw === 'true') return true;
  if (raw === '0' || raw === 'false') return false;
  errors.push({ name, message: `${name}=${raw} must be 0 or 1` });
  return fallback;
}

/** The most HTTP processes one server starts. */
export const MAX_HTTP_PROCESSES = 64;

/**
 * The longest KEEL_INSTANCE_ID that still fits 64 characters once a process adds `-<n>` (n up to MAX_HTTP_PROCESSES).
 */
const NAMED_INSTANCE_MAX = 64 - `-${MAX_HTTP_PROCESSES}`.length;

/** KEEL_HTTP_PROCESSES: unset is 1, `auto` is one per core the machine offers, else 1 to 64. */
function readHttpProcesses(env: Env, errors: SettingError[]): number {
  const raw = env.KEEL_HTTP_PROCESSES?.trim();
  if (raw === 'auto') return Math.min(MAX_HTTP_PROCESSES, Math.max(1, availableParallelism()));
  return readInteger(
    env,
    {
      name: 'KEEL_HTTP_PROCESSES',
      fallback: 1,
      min: 1,
      max: MAX_HTTP_PROCESSES,
      describe: `1 to ${MAX_HTTP_PROCESSES} processes, or auto for one per core`,
    },
    errors,
  );
}

function readCheckpointKey(env: Env, errors: SettingError[]): Buffer | undefined {
  const raw = env.KEEL_CHECKPOINT_KEY?.trim();
  if (raw === undefined || raw === '') return undefined;
  if (!/^(?:[0-9a-fA-F]{2}){32,}$/.test(raw)) {
    errors.push({
      name: 'KEEL_CHECKPOINT_KEY',
      message: 'KEEL_CHECKPOINT_KEY must be at least 32 bytes written as hex (64 or more hex digits)',
    });
    return undefined;
  }
  return Buffer.from(raw, 'hex');
}

/**
 * The session-signing secret: KEEL_AUTH_SECRET when given, otherwise derived from the
 * checkpoint key under its own label, so one secret to provision still yields two
 * independent keys.
 */
export function deriveAuthSecret(checkpointKey: Buffer): string {
  return createHmac('sha256', checkpointKey).update('keel/auth-secret/v1').digest('hex');
}

export function parseSettings(env: Env): Result<Settings, SettingError[]> {
  const errors: SettingError[] = [];
  const databaseUrl = env.DATABASE_URL?.trim() || undefined;
  const checkpointKey = readCheckpointKey(env, errors);
  if (databaseUrl && !checkpointKey && !errors.some((e) => e.name === 'KEEL_CHECKPOINT_KEY')) {
    errors.push({
      name: 'KEEL_CHECKPOINT_KEY',
      message:
        'DATABASE_URL is set but KEEL_CHECKPOINT_KEY is not: orchestration checkpoints cannot be authenticated. ' +
        'Set KEEL_CHECKPOINT_KEY to 32 random bytes in hex (for example: openssl rand -hex 32).',
    });
  }
  const authSecretRaw = env.KEEL_AUTH_SECRET?.trim() || undefined;
  if (authSecretRaw !== undefined && authSecretRaw.length < 32) {
    errors.push({ name: 'KEEL_AUTH_SECRET', message: 'KEEL_AUTH_SECRET must be at least 32 characters' });
  }
  const demoPassword = env.KEEL_DEMO_PASSWORD ?? DEMO_PASSWORD;
  if (demoPassword.length < 8 || demoPassword.length > 128) {
    errors.push({ name: 'KEEL_DEMO_PASSWORD', message: 'KEEL_DEMO_PASSWORD must be 8 to 128 characters' });
  }
  const metricsToken = env.KEEL_METRICS_TOKEN?.trim() || undefined;
  if (metricsToken !== undefined && metricsToken.length < 32) {
    errors.push({ name: 'KEEL_METRICS_TOKEN', message: 'KEEL_METRICS_TOKEN must be at least 32 characters' });
  }
  const baseUrl = env.KEEL_BASE_URL?.trim() || undefined;
  if (baseUrl !== undefined && !URL.canParse(baseUrl)) {
    errors.push({ name: 'KEEL_BASE_URL', message: `KEEL_BASE_URL=${baseUrl} is not a URL` });
  }
  const databaseReadUrl = env.DATABASE_READ_URL?.trim() || undefined;
  if (databaseReadUrl !== undefined && !/^postgres(?:ql)?:\/\//.test(databaseReadUrl)) {
    errors.push({
      name: 'DATABASE_READ_URL',
      message: 'DATABASE_READ_URL must be a postgres:// URL of a streaming replica',
    });
  } else if (databaseReadUrl !== undefined && !databaseUrl) {
    errors.push({
      name: 'DATABASE_READ_URL',
      message: 'DATABASE_READ_URL is set but DATABASE_URL is not: a replica needs its primary',
    });
  }
  const instanceId = env.KEEL_INSTANCE_ID?.trim() || defaultInstanceId();
  const httpProcesses = readHttpProcesses(env, errors);
  if (!INSTANCE_ID.test(instanceId)) {
    errors.push({
      name: 'KEEL_INSTANCE_ID',
      message: 'KEEL_INSTANCE_ID must be 1 to 64 letters, digits, dots, dashes or underscores',
    });
  } else if (
    httpProcesses > 1 &&
    env.KEEL_HTTP_PROCESS_INDEX === undefined &&
    env.KEEL_INSTANCE_ID?.trim() &&
    instanceId.length > NAMED_INSTANCE_MAX
  ) {
    // Each process works bulk jobs as `<id>-<n>` (lib/cli/http-primary.ts).
    errors.push({
      name: 'KEEL_INSTANCE_ID',
      message:
        `KEEL_INSTANCE_ID must be at most ${NAMED_INSTANCE_MAX} characters with KEEL_HTTP_PROCESSES above 1: ` +
        `each process adds -<n>`,
    });
  }
  const demo = readFlag(env, 'KEEL_DEMO', databaseUrl === undefined, errors);
  const host = readHost(env, demo, demoPassword, errors);
  const settings: Settings = {
    databaseUrl,
    databaseReadUrl,
    readMaxLagMs: readInteger(env, INTEGER_SETTINGS.readMaxLagMs, errors),
    instanceId,
    workerLeaseMs: readInteger(env, INTEGER_SETTINGS.workerLeaseMs, errors),
    httpProcesses,
    port: readInteger(env, INTEGER_SETTINGS.port, errors),
    host,
    demo,
    demoRuntime: readFlag(env, 'KEEL_DEMO_RUNTIME', true, errors),
    demoPassword,
    checkpointKey,
    authSecret: authSecretRaw ?? (checkpointKey ? deriveAuthSecret(checkpointKey) : undefined),
    staleThresholdMs: readInteger(env, INTEGER_SETTINGS.staleThresholdMs, errors),
    maxClockSkewMs: readInteger(env, INTEGER_SETTINGS.maxClockSkewMs, errors),
    proposalTtlMs: readInteger(env, INTEGER_SETTINGS.proposalTtlMs, errors),
    orchestrationLeaseMs: readInteger(env, INTEGER_SETTINGS.orchestrationLeaseMs, errors),
    signInPerMinute: readInteger(env, INTEGER_SETTINGS.signInPerMinute, errors),
    baseUrl,
    trustedProxies: (env.KEEL_TRUSTED_PROXIES ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    metricsToken,
    webhooks: parseWebhookSettings(env, errors),
    signIn: parseSignInSettings(env, errors),
    deepLinks: parseDeepLinkSettings(env, errors),
  };
  const { invalid } = parseTrustedProxies(settings.trustedProxies);
  if (invalid.length > 0) {
    errors.push({
      name: 'KEEL_TRUSTED_PROXIES',
      message: `KEEL_TRUSTED_PROXIES: not an address or CIDR range: ${invalid.join(', ')}`,
    });
  }
  return errors.length > 0 ? err(errors) : ok(settings);
}

/** The demo users' published password (README), when KEEL_DEMO_PASSWORD is unset. */
export const DEMO_PASSWORD = 'keel-demo';
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '::1', 'localhost']);
const HOST_NAME = /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/**
 * KEEL_HOST: an IP address or host name to listen on. Demo mode seeds users whose password
 * is printed in the README, so it listens on loopback unless told otherwise, and another
 * address needs a password of the operator's own (KEEL_DEMO_PASSWORD).
 */
function readHost(env: Env, demo: boolean, demoPassword: string, errors: SettingError[]): string | undefined {
  const raw = env.KEEL_HOST?.trim() || undefined;
  if (raw !== undefined && isIP(raw) === 0 && !HOST_NAME.test(raw)) {
    errors.push({ name: 'KEEL_HOST', message: `KEEL_HOST=${raw} is not an IP address or host name` });
    return undefined;
  }
  if (!demo) return raw;
  if (raw !== undefined && !LOOPBACK_HOSTS.has(raw) && demoPassword === DEMO_PASSWORD) {
    errors.push({
      name: 'KEEL_HOST',
      message:
        `KEEL_HOST=${raw} with demo mode: the demo users' password is the published keel-demo; ` +
        `set KEEL_DEMO_PASSWORD to one of your own, or KEEL_DEMO=0`,
    });
  }
  return raw ?? '127.0.0.1';
}

export function formatSettingErrors(errors: SettingError[]): string {
  return ['Keel cannot start: invalid settings', ...errors.map((e) => `  - ${e.message}`)].join('\n');
}
