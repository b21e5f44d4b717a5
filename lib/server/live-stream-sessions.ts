import type pg from 'pg';
import type { Role } from '../domain/roles';

/**
 * The sessions behind the open event streams (/api/events), checked again every few
 * seconds: a stream's session is read when it opens, and a stream lives for hours, so
 * without this a user signed out, disabled or demoted would keep hearing changes. One
 * statement per check covers every stream of the process, however many are open; a
 * stream whose session has ended, whose user is disabled, or whose role has changed
 * is closed (its page reconnects, and is then answered for who the user is now).
 */

export const SESSION_RECHECK_MS = 2_000;

export interface WatchedStream {
  /** The session token behind the stream; it never leaves the server. */
  token: string;
  /** The role the stream was opened with. */
  role: Role;
  /** Ends the stream; called at most once. */
  close: (why: StreamEnd) => void;
  /** Called after each check that found the session as the stream opened with it. */
  confirmed?: () => void;
}

export type StreamEnd = 'SIGNED_OUT' | 'DISABLED' | 'ROLE_CHANGED';

const SESSIONS_SQL = `
  select s.token, u.role, coalesce(u.banned, false) as banned
    from keel.session s
    join keel."user" u on u.id = s.user_id
   where s.token = any($1::text[])
     and s.expires_at > now()`;

export interface StreamSessionWatch {
  /** Starts watching a stream; the returned function stops (for a stream that ended on its own). */
  watch(stream: WatchedStream): () => void;
  /** One check of every watched stream now (the timer's work; tests call it directly). */
  check(): Promise<void>;
  size(): number;
}

export function createStreamSessionWatch(
  pool: Pick<pg.Pool, 'query'>,
  options: { intervalMs?: number; onError?: (error: unknown) => void } = {},
): StreamSessionWatch {
  const streams = new Set<WatchedStream>();
  let timer: NodeJS.Timeout | null = null;
  let checking: Promise<void> | null = null;

  const end = (stream: WatchedStream, why: StreamEnd) => {
    if (!streams.delete(stream)) return;
    stopIfIdle();
    stream.close(why);
  };

  const stopIfIdle = () => {
    if (streams.size > 0 || !timer) return;
    clearInterval(timer);
    timer = null;
  };

  async function checkNow(): Promise<void> {
    if (streams.size === 0) return;
    const watched = [...streams];
    const tokens = [...new Set(watched.map((s) => s.token))];
    const { rows } = await pool.query<{ token: string; role: string; banned: boolean }>(SESSIONS_SQL, [tokens]);
    const byToken = new Map(rows.map((row) => [row.token, row]));
    for (const stream of watched) {
      const row = byToken.get(stream.token);
      if (!row) end(stream, 'SIGNED_OUT');
      else if (row.banned) end(stream, 'DISABLED');
      else if (row.role !== stream.role) end(stream, 'ROLE_CHANGED');
      else stream.confirmed?.();
    }
  }

  const check = () => {
    // One check at a time: a slow database does not stack them up.
    checking ??= checkNow().finally(() => {
      checking = null;
    });
    return checking;
  };

  return {
    watch(stream) {
      streams.add(stream);
      if (!timer) {
        timer = setInterval(
          () => void check().catch((error: unknown) => options.onError?.(error)),
          options.intervalMs ?? SESSION_RECHECK_MS,
        );
        timer.unref();
      }
      return () => {
        streams.delete(stream);
        stopIfIdle();
      };
    },
    check,
    size: () => streams.size,
  };
}
