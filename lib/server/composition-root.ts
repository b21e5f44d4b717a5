import 'server-only';
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { postgresAuditLog } from '../adapters/audit-log';
import { postgresExportSlots, type ExportSlots } from '../adapters/export-slots';
import { systemProposerClock } from '../adapters/proposer-clock';
import { postgresSettlementUnitOfWork } from '../adapters/settlement-replay';
import { postgresSignInLockout } from '../adapters/sign-in-lockout';
import { postgresSsoRefusals } from '../adapters/sso-audit';
import { postgresTakeoverUnitOfWork } from '../adapters/takeover-unit-of-work';
import { authPasswordHasher, postgresUserUnitOfWork } from '../adapters/user-directory';
import { postgresPreferenceUnitOfWork } from '../adapters/user-preferences';
import { postgresWebhookUnitOfWork } from '../adapters/webhook-deliveries';
import { httpWebhookSender } from '../adapters/webhook-sender';
import { createAuth, type KeelAuth } from '../auth/auth';
import { formatSettingErrors, parseSettings, type Settings } from '../config/settings';
import { createDatabase, createPool, type Database } from '../db/client';
import { logger } from '../observability/logger';
import { recordListRead } from '../observability/metrics';
import { loggableError } from '../observability/safe-error';
import { singleton } from '../observability/singletons';
import type { AuditLog } from '../ports/audit-log';
import type { SignInLockout } from '../ports/sign-in-lockout';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { PreferencePorts } from '../ports/user-preferences';
import type { RecoveryServiceDeps } from '../services/recovery-common';
import type { SettlementServiceDeps } from '../services/settlement-action';
import type { UserServicePorts } from '../services/users';
import type { WebhookAdminPorts } from '../services/webhook-admin';
import { EXPORT_LIMITS } from './audit-export';
import { failOverToPrimary, ReplicaMonitor } from './read-replica';

/**
 * The composition root: the one place in the server that makes the process's settings, pools,
 * database and auth (`runtime()`), builds Keel's adapters and hands them to services, actions,
 * routes and workers, and starts the background work (`startBackground()`). Tests, the demo
 * runtime, the CLI and the benches build their own over their own connections
 * (docs/architecture.md#layer-rules).
 */

// The process's runtime.

interface Runtime {
  settings: Settings;
  /** The request pool: pages, API routes, actions, sign-in. */
  pool: pg.Pool;
  /** CSV exports only, one connection per export slot, so a slow download never takes a request's connection. */
  exportPool: pg.Pool;
  /** /api/health only, with short timeouts, so it never waits behind user work. */
  healthPool: pg.Pool;
  db: Database;
  /**
   * The streaming replica list pages read from (DATABASE_READ_URL) and its monitor;
   * null without one. Only lib/server/read-source.ts hands it out.
   */
  replica: { db: Database; pool: pg.Pool; monitor: ReplicaMonitor } | null;
  auth: KeelAuth;
  /**
   * This process's owner token (docs/design.md#owner-token): random, never written anywhere, so
   * the console only ever observes ABSENT or OTHER_PROCESS.
   */
  ownerToken: Buffer;
  startedAt: Date;
}

/** The server's settings, pool, database and auth, made once per process. */
export const runtime = (): Runtime => singleton('runtime', createRuntime);

function createRuntime(): Runtime {
  const parsed = parseSettings(process.env);
  if (!parsed.ok) throw new Error(formatSettingErrors(parsed.error));
  const settings = parsed.value;
  if (!settings.databaseUrl) {
    throw new Error('DATABASE_URL is not set: start Keel with `npm start`, which provides the embedded database.');
  }
  if (!settings.authSecret) throw new Error('No session secret: set KEEL_CHECKPOINT_KEY or KEEL_AUTH_SECRET.');
  // A request waits at most 5 s for a connection, then gets 503 DATABASE_BUSY instead of hanging.
  const pool = createPool(settings.databaseUrl, 10, { connectionTimeoutMillis: 5_000 });
  const exportPool = createPool(settings.databaseUrl, EXPORT_LIMITS.total, {
    application_name: 'keel-export',
    connectionTimeoutMillis: 2_000,
    statement_timeout: EXPORT_LIMITS.statementTimeoutMs,
    // The server's backstop should the export's own idle timeout ever fail to release it.
    idle_in_transaction_session_timeout: EXPORT_LIMITS.idleInTransactionMs,
    idleTimeoutMillis: 10_000,
  });
  const healthPool = createPool(settings.databaseUrl, 2, {
    application_name: 'keel-health',
    connectionTimeoutMillis: 2_000,
    statement_timeout: 2_000,
    query_timeout: 3_000,
    idle_in_transaction_session_timeout: 5_000,
  });
  const db = createDatabase(pool);
  const auth = createAuth(db, {
    secret: settings.authSecret,
    port: settings.port,
    baseUrl: settings.baseUrl,
    signInPerMinute: settings.signInPerMinute,
    oidc: settings.signIn.oidc,
  });
  return {
    settings,
    pool,
    exportPool,
    healthPool,
    db,
    replica: createReplica(settings, pool),
    auth,
    ownerToken: randomBytes(16),
    startedAt: new Date(),
  };
}

function createReplica(settings: Settings, primary: pg.Pool): Runtime['replica'] {
  if (!settings.databaseReadUrl) return null;
  // Lists only, read-only: a statement that tried to write would fail on the standby anyway.
  // A list read is bounded like a page's: a replica that stops answering mid-query frees its connection.
  const pool = createPool(settings.databaseReadUrl, 10, {
    application_name: 'keel-read',
    connectionTimeoutMillis: 5_000,
    statement_timeout: 30_000,
    query_timeout: 35_000,
    options: '-c default_transaction_read_only=on',
  });
  // The monitor has a connection of its own: its checks never wait behind list reads, and
  // never fall over to the primary, which would answer for a replica it is not.
  const monitorPool = createPool(settings.databaseReadUrl, 1, {
    application_name: 'keel-read-monitor',
    connectionTimeoutMillis: 2_000,
    statement_timeout: 2_000,
    query_timeout: 3_000,
  });
  const primaryPosition = async () =>
    (await primary.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn')).rows[0]!.lsn;
  const monitor = new ReplicaMonitor(monitorPool, settings.readMaxLagMs, primaryPosition);
  void monitor.start();
  failOverToPrimary(pool, primary, (error) => {
    recordListRead('replica_failover');
    monitor.reportUnreachable(error);
  });
  return { db: createDatabase(pool), pool, monitor };
}

// The adapters, built for services, actions, routes and workers.

export function recoveryDeps(): RecoveryServiceDeps {
  const { db, settings, ownerToken } = runtime();
  if (!settings.checkpointKey) throw new Error('KEEL_CHECKPOINT_KEY is required');
  return {
    unitOfWork: postgresTakeoverUnitOfWork(db, { checkpointKey: settings.checkpointKey }),
    // One clock per process: the proposer compares each server time with the last one this process saw.
    clock: singleton('proposer-clock', systemProposerClock),
    settings: {
      staleThresholdMs: settings.staleThresholdMs,
      maxClockSkewMs: settings.maxClockSkewMs,
      proposalTtlMs: settings.proposalTtlMs,
      orchestrationLeaseMs: settings.orchestrationLeaseMs,
    },
    ownerToken,
  };
}

/**
 * The settlement services' unit of work (replay, discard, requeue,
 * bulk replay, and the bulk replay worker) over the server's pool.
 */
export function settlementDeps(): SettlementServiceDeps {
  return { unitOfWork: postgresSettlementUnitOfWork(runtime().db) };
}

/** The audit CSV exports' slots, shared with every other process and instance through PostgreSQL. */
export function exportSlots(): ExportSlots {
  return postgresExportSlots(runtime().db, EXPORT_LIMITS);
}

/** User management: its unit of work and better-auth's password hasher. */
export function userServicePorts(): UserServicePorts {
  const { db, auth } = runtime();
  return { unitOfWork: postgresUserUnitOfWork(db), passwords: authPasswordHasher(auth) };
}

/**
 * The Webhooks page's Send test and Retry now: the delivery store and a sender with this process's endpoint settings.
 */
export function webhookAdminPorts(): WebhookAdminPorts {
  const { db, settings } = runtime();
  const baseUrl = settings.baseUrl ?? `http://localhost:${settings.port}`;
  return {
    unitOfWork: postgresWebhookUnitOfWork(db),
    sender: httpWebhookSender({ endpoints: settings.webhooks.endpoints, baseUrl }),
  };
}

/** A user's own settings: the time zone preference and its audit event. */
export function preferencePorts(): { unitOfWork: UnitOfWork<PreferencePorts> } {
  return { unitOfWork: postgresPreferenceUnitOfWork(runtime().db) };
}

/** The audit log `action()` writes refusals to, outside the handler's transaction. */
export function actionAuditLog(): AuditLog {
  return postgresAuditLog(runtime().db);
}

/** What the `/api/auth/*` surface records: failed sign-ins (lockout) and refused SSO callbacks. */
export function authSurfacePorts(): {
  lockout: SignInLockout;
  recordSsoRefusal: (code: string, requestId: string | null) => Promise<void>;
} {
  const { db } = runtime();
  return { lockout: postgresSignInLockout(db), recordSsoRefusal: postgresSsoRefusals(db) };
}

// The background work.

/**
 * The server's own work besides answering requests: the bulk replay worker, the metric
 * sampler and the proposal deadline sweep always, the webhook worker with endpoints
 * configured, the demo runtime in demo mode unless KEEL_DEMO_RUNTIME=0, and, under
 * `keel start`, exiting when the launcher is gone. Started once per process even if a
 * development reload calls register again; with several HTTP processes
 * (KEEL_HTTP_PROCESSES), by the first of them only.
 */
export async function startBackground(): Promise<void> {
  if (process.env.KEEL_LAUNCHED === '1') exitWhenOrphaned();
  const httpProcess = process.env.KEEL_HTTP_PROCESS_INDEX;
  if (httpProcess !== undefined && httpProcess !== '0') return;
  const workers = singleton('background-workers', () => ({ started: false }));
  if (workers.started || process.env.NEXT_PHASE === 'phase-production-build') return;
  workers.started = true;
  try {
    const [
      { startBulkReplayWorker },
      { startMetricSampler },
      { startWebhookWorker, syncWebhookEndpoints },
      { startProposalExpiry },
    ] = await Promise.all([
      import('../workers/bulk-replay-worker'),
      import('../workers/metric-sampler'),
      import('../workers/webhook-worker'),
      import('../workers/proposal-expiry'),
    ]);
    const { db, settings } = runtime();
    const log = (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) =>
      logger[level](fields ?? {}, message);
    startBulkReplayWorker({
      ...settlementDeps(),
      log,
      worker: { instance: settings.instanceId, leaseMs: settings.workerLeaseMs },
    });
    startMetricSampler({ db, log, staleThresholdMs: settings.staleThresholdMs });
    startProposalExpiry({ deps: recoveryDeps(), log });
    await syncWebhookEndpoints(db, settings.webhooks.endpoints);
    if (settings.webhooks.endpoints.length > 0) {
      startWebhookWorker({
        db,
        log,
        settings: settings.webhooks,
        baseUrl: settings.baseUrl ?? `http://localhost:${settings.port}`,
      });
    }
    if (settings.demo && settings.demoRuntime) {
      const { startDemoRuntime } = await import('../demo/runtime');
      startDemoRuntime({ db, settings, log });
    }
  } catch (error) {
    // The pages report a missing database themselves; the server still comes up.
    logger.error({ error: loggableError(error) }, 'background workers did not start');
  }
}

/** Started by `keel start`: if the launcher disappears (killed hard), do not linger. */
function exitWhenOrphaned(): void {
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) process.exit(0);
  }, 1_000).unref();
}
