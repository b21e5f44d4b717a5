import 'server-only';
import { cookies } from 'next/headers';
import { isLsn, parseLsn } from '../domain/lsn';
import type { Database } from '../db/client';
import { logger } from './logger';
import { recordListRead } from './metrics';
import { loggableError } from './safe-error';
import { runtime } from './runtime';

/**
 * Where a list page or list API reads from (docs/deployment.md): the streaming replica
 * when one is configured, usable (a standby, streaming, at most KEEL_READ_MAX_LAG_MS
 * behind) and caught up with this user's last write; else the primary. Decisions never
 * come through here: takeovers, replays, requeues and detail pages an action is taken
 * from read the primary (`runtime().db`), and the dependency rules keep actions,
 * services, adapters and workers from importing this module.
 */

/** The primary's WAL position after a user's last write, set by every applied action. */
export const WRITE_FENCE_COOKIE = 'keel-write-lsn';
const FENCE_MAX_AGE_S = 60;

export async function listDb(): Promise<Database> {
  const { db, replica } = runtime();
  if (!replica) return db;
  const fence = (await cookies()).get(WRITE_FENCE_COOKIE)?.value;
  const fenced = fence && isLsn(fence) ? parseLsn(fence) : null;
  const usable = fenced === null ? replica.monitor.state().usable : await replica.monitor.caughtUpTo(fenced);
  recordListRead(usable ? 'replica' : 'primary');
  return usable ? replica.db : db;
}

/**
 * After an applied action: remembers the primary's position in the user's cookie, so
 * their next list reads wait for the replica to have it, or go to the primary.
 */
export async function fenceWrite(): Promise<void> {
  const { pool, replica, settings } = runtime();
  if (!replica) return;
  let lsn: string | undefined;
  try {
    lsn = (await pool.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn')).rows[0]?.lsn;
  } catch (error) {
    // The action has applied; without a fence the user's next list may lag by the replica's delay, no more.
    logger.warn({ error: loggableError(error) }, 'could not read the write position after an action');
    return;
  }
  if (!lsn) return;
  (await cookies()).set(WRITE_FENCE_COOKIE, lsn, {
    httpOnly: true,
    sameSite: 'lax',
    path: '/',
    maxAge: FENCE_MAX_AGE_S,
    // As the session cookie: secure behind an https base URL.
    secure: settings.baseUrl?.startsWith('https://') ?? false,
  });
}
