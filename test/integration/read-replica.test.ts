import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase, createPool } from '../../lib/db/client';
import { parseLsn } from '../../lib/domain/lsn';
import { LiveEvents } from '../../lib/server/live-events';
import { failOverToPrimary, ReplicaMonitor } from '../../lib/server/read-replica';
import { freshDatabase } from '../support/database';

// The replica monitor, the fail-over and the live-update gate against real PostgreSQL
// servers that are not usable replicas. A real standby is exercised end to end by
// e2e/two-instances.spec.ts; the lag arithmetic by test/unit/replica-lag.test.ts.
const pools: ReturnType<typeof createPool>[] = [];
const pool = (url: string, max = 1, options: Parameters<typeof createPool>[2] = {}) => {
  const made = createPool(url, max, options);
  pools.push(made);
  return made;
};
const CLOSED_PORT = 'postgres://postgres@127.0.0.1:1/keel';

afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()));
});

const position = (p: ReturnType<typeof createPool>) => async () =>
  (await p.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn')).rows[0]!.lsn;

describe('the read replica monitor', () => {
  it('does not use a server that is not a standby, and never trusts an unchecked one', async () => {
    const { url } = await freshDatabase({ empty: true });
    const primary = pool(url);
    const monitor = new ReplicaMonitor(pool(url), 5_000, position(primary));
    expect(monitor.state()).toEqual({ usable: false, reason: 'unchecked', lagMs: null, replayLsn: null });
    expect(await monitor.check()).toEqual({ usable: false, reason: 'not_a_standby', lagMs: null, replayLsn: null });
    // However far a write fence reaches, a primary posing as the replica is never read as one.
    expect(await monitor.caughtUpTo(parseLsn('0/0'))).toBe(false);
  });

  it('reports an unreachable replica, and keeps reporting it until it answers', async () => {
    const { url } = await freshDatabase({ empty: true });
    const monitor = new ReplicaMonitor(
      pool(CLOSED_PORT, 1, { connectionTimeoutMillis: 1_000 }),
      5_000,
      position(pool(url)),
    );
    expect(await monitor.check()).toEqual({ usable: false, reason: 'unreachable', lagMs: null, replayLsn: null });
    expect(await monitor.check()).toMatchObject({ usable: false, reason: 'unreachable' });
  });
});

describe('a list read whose replica cannot be reached', () => {
  it('runs on the primary, through pg-pool’s query and a transaction, and says so once per failure', async () => {
    const { url } = await freshDatabase({ empty: true });
    const primary = pool(url, 2);
    const replica = pool(CLOSED_PORT, 2, { connectionTimeoutMillis: 1_000 });
    const failures: unknown[] = [];
    failOverToPrimary(replica, primary, (error) => failures.push(error));
    const { rows } = await replica.query<{ standby: boolean; db: string }>(
      'select pg_is_in_recovery() as standby, current_database() as db',
    );
    expect(rows).toEqual([{ standby: false, db: new URL(url).pathname.slice(1) }]);
    const fromTransaction = await createDatabase(replica).transaction(
      async (tx) => (await tx.execute<{ one: number }>('select 1 as one')).rows,
    );
    expect(fromTransaction).toEqual([{ one: 1 }]);
    expect(failures).toHaveLength(2);
    expect(
      failures.every(
        (e) => e instanceof Error && /ECONNREFUSED/.test(String((e as NodeJS.ErrnoException).code ?? e.message)),
      ),
    ).toBe(true);
    // The borrowed connections went back to the primary's pool, not to the replica's.
    expect(primary.totalCount).toBeGreaterThan(0);
    expect(primary.waitingCount).toBe(0);
    expect(replica.totalCount).toBe(0);
  });
});

describe('live updates behind a replica', () => {
  it('announce a change only once the replica has replayed it', async () => {
    const { url, pool: writer } = await freshDatabase();
    let replayed = false;
    let asked: (lsn: bigint) => void = () => {};
    const firstAsk = new Promise<bigint>((resolve) => (asked = resolve));
    const gate = {
      maxWaitMs: 600_000,
      monitor: {
        state: () => ({ usable: true as const, lagMs: 0, replayLsn: 0n }),
        async caughtUpTo(lsn: bigint) {
          asked(lsn);
          return replayed;
        },
      },
    };
    const events = new LiveEvents(url, gate);
    const received: string[] = [];
    const stop = events.subscribe((topic) => received.push(topic));
    try {
      await events.ready();
      const heard = new Promise<void>((resolve) => events.once('change', () => resolve()));
      await writer.query(
        `insert into keel.audit_event (actor_login, actor_role, action, target_kind, target_id, outcome)
         values ('t', 'admin', 'test', 'x', '1', 'APPLIED')`,
      );
      // The change was seen and the replica asked about the primary's position after it: nothing is announced yet.
      const lsn = await firstAsk;
      const { rows } = await writer.query<{ written: boolean }>(
        `select $1::pg_lsn <= pg_current_wal_lsn() as written`,
        [`${(lsn >> 32n).toString(16)}/${(lsn & 0xffffffffn).toString(16)}`],
      );
      expect(rows[0]!.written).toBe(true);
      expect(received).toEqual([]);
      replayed = true;
      await heard;
      expect(received).toEqual(['audit']);
    } finally {
      stop();
    }
  });
});
