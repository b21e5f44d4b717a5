import 'server-only';
import type pg from 'pg';
import { isDatabaseBusy } from '../db/client';
import { compareLsn, parseLsn } from '../domain/lsn';
import { keptSamples, replicaLagMs, type PrimarySample } from '../domain/replica-lag';
import { logger } from '../observability/logger';
import { loggableError } from '../observability/safe-error';

/** Why list reads are going to the primary rather than the replica. */
export type PrimaryReason = 'unchecked' | 'unreachable' | 'not_a_standby' | 'lagging';

export type ReplicaState =
  | { usable: true; lagMs: number; replayLsn: bigint }
  | { usable: false; reason: PrimaryReason; lagMs: number | null; replayLsn: bigint | null };

const CHECK_INTERVAL_MS = 1_000;
// A fence newer than the last check asks the replica again, at most this often.
const RECHECK_MS = 50;

const REPLICA_STATE = `select pg_is_in_recovery() as standby, pg_last_wal_replay_lsn()::text as replay`;

/**
 * Watches the streaming replica that list pages read from (DATABASE_READ_URL), each
 * second: it must be a standby and at most `maxLagMs` behind the primary, measured
 * against the primary's own write positions (lib/domain/replica-lag.ts), so a standby
 * cut off from its primary counts as falling behind, not as caught up. While it is not
 * usable, lists read from the primary. `caughtUpTo` answers whether the replica has
 * replayed a given primary position, so a user's reads after their own write, and live
 * updates, never show a page older than what they saw happen.
 */
export class ReplicaMonitor {
  private current: ReplicaState = { usable: false, reason: 'unchecked', lagMs: null, replayLsn: null };
  private timer: NodeJS.Timeout | null = null;
  private checking: Promise<ReplicaState> | null = null;
  private checkedAt = 0;
  private samples: PrimarySample[] = [];

  /**
   * `replica` is a pool of its own on the replica (never one that falls over to the
   * primary); `primaryPosition` reads `pg_current_wal_lsn()` on the primary.
   */
  constructor(
    private readonly replica: pg.Pool,
    private readonly maxLagMs: number,
    private readonly primaryPosition: () => Promise<string>,
  ) {}

  /** Starts the periodic check (idempotent); the first check runs now. */
  start(): Promise<ReplicaState> {
    if (!this.timer) {
      this.timer = setInterval(() => void this.check(), CHECK_INTERVAL_MS);
      this.timer.unref();
    }
    return this.check();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  state(): ReplicaState {
    return this.current;
  }

  /**
   * A list read could not connect to the replica: lists go to the primary from now on,
   * until the next check finds the replica usable again.
   */
  reportUnreachable(error: unknown): void {
    if (this.current.usable || this.current.reason !== 'unreachable') {
      logger.warn({ error: loggableError(error) }, 'read replica unreachable; lists read from the primary');
    }
    this.current = { usable: false, reason: 'unreachable', lagMs: null, replayLsn: null };
  }

  /** Asks the replica now (one query shared by concurrent callers). */
  check(): Promise<ReplicaState> {
    this.checking ??= this.query().finally(() => {
      this.checking = null;
      this.checkedAt = performance.now();
    });
    return this.checking;
  }

  /**
   * True when the replica is usable and has replayed the primary up to `lsn`: from the
   * last check when that is enough, else asking again (at most every 50 ms; a call that
   * cannot ask again answers false, so the read goes to the primary). A position the
   * primary has not reached, even when asked just now, was never written by it: a forged
   * fence, ignored rather than obeyed.
   */
  async caughtUpTo(lsn: bigint): Promise<boolean> {
    const known = this.current;
    if (known.usable && compareLsn(known.replayLsn, lsn) >= 0) return true;
    if (performance.now() - this.checkedAt < RECHECK_MS) return false;
    const now = await this.check();
    if (!now.usable) return false;
    if (compareLsn(now.replayLsn, lsn) >= 0) return true;
    const primary = this.samples.at(-1);
    return primary !== undefined && compareLsn(lsn, primary.lsn) > 0;
  }

  private async query(): Promise<ReplicaState> {
    const before = this.current;
    // The primary's position first: a replica that has replayed it is not behind.
    try {
      const at = performance.now();
      const lsn = parseLsn(await this.primaryPosition());
      this.samples = keptSamples([...this.samples, { atMs: at, lsn }], at, this.maxLagMs + 2 * CHECK_INTERVAL_MS);
    } catch {
      // The primary does not answer: judge the replica by the positions sampled so far.
    }
    try {
      const { rows } = await this.replica.query<{ standby: boolean; replay: string | null }>(REPLICA_STATE);
      const row = rows[0]!;
      if (!row.standby || row.replay === null) {
        this.current = { usable: false, reason: 'not_a_standby', lagMs: null, replayLsn: null };
      } else {
        const replayLsn = parseLsn(row.replay);
        const lagMs = Math.round(replicaLagMs(this.samples, replayLsn, performance.now()));
        this.current =
          lagMs > this.maxLagMs
            ? { usable: false, reason: 'lagging', lagMs, replayLsn }
            : { usable: true, lagMs, replayLsn };
      }
    } catch (error) {
      this.reportUnreachable(error);
    }
    if (before.usable !== this.current.usable) {
      const fields = this.current.usable
        ? { lagMs: this.current.lagMs }
        : { reason: this.current.reason, lagMs: this.current.lagMs };
      logger.info(fields, this.current.usable ? 'lists read from the replica' : 'lists read from the primary');
    }
    return this.current;
  }
}

type ConnectCallback = (error: Error | undefined, client?: pg.PoolClient, done?: (release?: unknown) => void) => void;

/**
 * Makes `replica` hand out a `primary` connection when it cannot connect (the replica
 * went away between two checks of the monitor), so a list read runs on the primary
 * instead of failing; `onFailure` hears of it. A replica that is only busy (every
 * connection taken) still answers DATABASE_BUSY rather than loading the primary.
 */
export function failOverToPrimary(replica: pg.Pool, primary: pg.Pool, onFailure: (error: unknown) => void): void {
  const connect = replica.connect.bind(replica) as () => Promise<pg.PoolClient>;
  const fallback = (): Promise<pg.PoolClient> =>
    connect().catch((error: unknown) => {
      if (isDatabaseBusy(error)) throw error;
      onFailure(error);
      return primary.connect();
    });
  // pg-pool's own query() checks out through this.connect with a callback; drizzle's transactions use the promise.
  replica.connect = ((callback?: ConnectCallback) => {
    if (!callback) return fallback();
    fallback().then(
      (client) => callback(undefined, client, (release) => client.release(release as Error | boolean | undefined)),
      (error: Error) => callback(error),
    );
    return undefined;
  }) as typeof replica.connect;
}
