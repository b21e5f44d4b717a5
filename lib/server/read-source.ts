import 'server-only';
import { cookies } from 'next/headers';
import { isLsn, parseLsn } from '../domain/lsn';
import type { Database } from '../db/client';
import { recordListRead } from '../observability/metrics';
import { runtime } from './composition-root';
import { WRITE_FENCE_COOKIE } from './write-fence';

/**
 * Where a list page or list API reads from (docs/deployment.md): the streaming replica
 * when one is configured, usable (a standby, streaming, at most KEEL_READ_MAX_LAG_MS
 * behind) and caught up with this user's last write; else the primary. Decisions never
 * come through here: takeovers, replays, requeues and detail pages an action is taken
 * from read the primary (`runtime().db`), and the dependency rules keep actions,
 * services, adapters and workers from importing this module.
 */

/**
 * Where a read shared by every reader comes from (lib/server/live-reads.ts): no user's
 * write fence applies, and live events are announced only once the replica has replayed
 * them, so a read made on an event sees what the event announced.
 */
export function sharedListDb(): Database {
  const { db, replica } = runtime();
  // Not a request's read: keel_list_reads_total counts those (docs/deployment.md).
  return replica?.monitor.state().usable ? replica.db : db;
}

export async function listDb(): Promise<Database> {
  const { db, replica } = runtime();
  if (!replica) return db;
  const fence = (await cookies()).get(WRITE_FENCE_COOKIE)?.value;
  const fenced = fence && isLsn(fence) ? parseLsn(fence) : null;
  const usable = fenced === null ? replica.monitor.state().usable : await replica.monitor.caughtUpTo(fenced);
  recordListRead(usable ? 'replica' : 'primary');
  return usable ? replica.db : db;
}
