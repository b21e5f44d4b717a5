import 'server-only';
import type pg from 'pg';
import { compareLsn, parseLsn } from '../domain/lsn';
import { logger } from './logger';
import { loggableError } from './safe-error';

/** Why list reads are going to the primary rather than the replica. */
export type PrimaryReason = 'unchecked' | 'unreachable' | 'not_a_standby' | 'not_streaming' | 'lagging';

export type ReplicaState =
  | { usable: true; lagMs: number; replayLsn: bigint }
  | { usable: false; reason: PrimaryReason; lagMs: number | null; replayLsn: bigint | null };

const CHECK_INTERVAL_MS = 1_000;
// A fence newer than the last check asks the replica again, at most this often.
const RECHECK_MS = 50;

// Lag is 0 while everything received is replayed: a quiet primary is not a lagging replica.
const REPLICA_STATE = `
  select pg_is_in_recovery() as standby,
         pg_last_wal_replay_lsn()::text as replay,
         case when pg_last_wal_receive_lsn() is null then null
              when pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() then 0
              else greatest(0, extract(epoch from clock_timestamp() - pg_last_xact_replay_timestamp()) * 1000)
         end::float8 as lag_ms`;

/**
 * Watches the streaming replica that list pages read from (DATABASE_READ_URL): whether
 * it is a standby, still streaming and at most `maxLagMs` behind, checked each second.
 * While it is not, lists read from the primary. `caughtUpTo` answers whether the
 * replica has replayed a given primary position, so a user's reads after their own
 * write, and live updates, never show a page older than what they saw happen.
 */
export class ReplicaMonitor {
  private current: ReplicaState = { usable: false, reason: 'unchecked', lagMs: null, replayLsn: null };
  private timer: NodeJS.Timeout | null = null;
  private checking: Promise<ReplicaState> | null = null;
  private checkedAt = 0;

  constructor(
    private readonly pool: pg.Pool,
    private readonly maxLagMs: number,
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
   * last check when that is enough, else asking again (at most every 50 ms).
   */
  async caughtUpTo(lsn: bigint): Promise<boolean> {
    const known = this.current;
    if (known.usable && compareLsn(known.replayLsn, lsn) >= 0) return true;
    if (performance.now() - this.checkedAt < RECHECK_MS) return false;
    const now = await this.check();
    return now.usable && compareLsn(now.replayLsn, lsn) >= 0;
  }

  private async query(): Promise<ReplicaState> {
    const before = this.current;
    try {
      const { rows } = await this.pool.query<{ standby: boolean; replay: string | null; lag_ms: number | null }>(REPLICA_STATE);
      const row = rows[0]!;
      const replayLsn = row.replay === null ? null : parseLsn(row.replay);
      if (!row.standby) this.current = { usable: false, reason: 'not_a_standby', lagMs: null, replayLsn: null };
      else if (row.lag_ms === null || replayLsn === null) this.current = { usable: false, reason: 'not_streaming', lagMs: null, replayLsn };
      else if (row.lag_ms > this.maxLagMs) this.current = { usable: false, reason: 'lagging', lagMs: Math.round(row.lag_ms), replayLsn };
      else this.current = { usable: true, lagMs: Math.round(row.lag_ms), replayLsn };
    } catch (error) {
      if (before.usable || before.reason !== 'unreachable') logger.warn({ error: loggableError(error) }, 'read replica unreachable; lists read from the primary');
      this.current = { usable: false, reason: 'unreachable', lagMs: null, replayLsn: null };
    }
    if (before.usable !== this.current.usable) {
      const fields = this.current.usable ? { lagMs: this.current.lagMs } : { reason: this.current.reason, lagMs: this.current.lagMs };
      logger.info(fields, this.current.usable ? 'lists read from the replica' : 'lists read from the primary');
    }
    return this.current;
  }
}
