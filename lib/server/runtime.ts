import 'server-only';
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { createAuth, type KeelAuth } from '../auth/auth';
import { formatSettingErrors, parseSettings, type Settings } from '../config/settings';
import { createDatabase, createPool, type Database } from '../db/client';

interface Runtime {
  settings: Settings;
  pool: pg.Pool;
  db: Database;
  auth: KeelAuth;
  /**
   * This process's owner token (DESIGN.md 4.2): random, never written anywhere, so
   * the console only ever observes ABSENT or OTHER_PROCESS.
   */
  ownerToken: Buffer;
  startedAt: Date;
}

const globalRuntime = globalThis as typeof globalThis & { __keelRuntime?: Runtime };

/** The server's settings, pool, database and auth, made once per process. */
export function runtime(): Runtime {
  if (globalRuntime.__keelRuntime) return globalRuntime.__keelRuntime;
  const parsed = parseSettings(process.env);
  if (!parsed.ok) throw new Error(formatSettingErrors(parsed.error));
  const settings = parsed.value;
  if (!settings.databaseUrl) {
    throw new Error('DATABASE_URL is not set: start Keel with `npm start`, which provides the embedded database.');
  }
  if (!settings.authSecret) throw new Error('No session secret: set KEEL_CHECKPOINT_KEY or KEEL_AUTH_SECRET.');
  const pool = createPool(settings.databaseUrl, 10);
  const db = createDatabase(pool);
  const auth = createAuth(db, {
    secret: settings.authSecret,
    port: settings.port,
    baseUrl: settings.baseUrl,
    signInPerMinute: settings.signInPerMinute,
  });
  globalRuntime.__keelRuntime = { settings, pool, db, auth, ownerToken: randomBytes(16), startedAt: new Date() };
  return globalRuntime.__keelRuntime;
}
