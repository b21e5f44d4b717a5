import 'server-only';
import { cookies } from 'next/headers';
import { logger } from '../observability/logger';
import { runtime } from './composition-root';
import { loggableError } from '../observability/safe-error';

/**
 * The primary's WAL position after a user's last write, kept in an HTTP-only cookie so
 * that user's list reads wait for the replica to have it, or go to the primary
 * (lib/server/read-source.ts, docs/deployment.md). Only set when a replica is configured.
 */
export const WRITE_FENCE_COOKIE = 'keel-write-lsn';

/**
 * Remembers the primary's current position for this user. Called after every action of
 * a signed-in user, applied or refused (a refusal writes its audit event). Never throws:
 * the action has happened, and without a fence the user's next list may at worst lag by
 * the replica's tolerated delay.
 */
export async function fenceWrite(): Promise<void> {
  try {
    const { pool, replica, settings } = runtime();
    if (!replica) return;
    const lsn = (await pool.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn')).rows[0]?.lsn;
    if (!lsn) return;
    (await cookies()).set(WRITE_FENCE_COOKIE, lsn, {
      httpOnly: true,
      sameSite: 'lax',
      path: '/',
      // Outlives the longest lag the replica may have while still in use.
      maxAge: Math.max(60, Math.ceil(settings.readMaxLagMs / 1000) + 5),
      // As the session cookie: secure behind an https base URL.
      secure: settings.baseUrl?.startsWith('https://') ?? false,
    });
  } catch (error) {
    logger.warn({ error: loggableError(error) }, 'could not remember the write position after an action');
  }
}
