import 'server-only';
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { createAuth, type KeelAuth } from '../auth/auth';
import { formatSettingErrors, parseSettings, type Settings } from '../config/settings';
import { createDatabase, createPool, type Database } from '../db/client';
import { EXPORT_LIMITS } from './audit-export';
import { recordListRead } from './metrics';
import { failOverToPrimary, ReplicaMonitor } from './read-replica';
import { singleton } from './singletons';

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
