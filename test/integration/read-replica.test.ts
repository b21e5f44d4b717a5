import { afterAll, describe, expect, it } from 'vitest';
import { createPool } from '../../lib/db/client';
import { parseLsn } from '../../lib/domain/lsn';
import { ReplicaMonitor } from '../../lib/server/read-replica';
import { freshDatabase } from '../support/database';

// The replica monitor against servers that are not usable replicas: lists must stay on the primary.
// A real standby is exercised end to end by e2e/two-instances.spec.ts.
describe('the read replica monitor', () => {
  const pools: ReturnType<typeof createPool>[] = [];
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.end()));
  });

  it('does not use a server that is not a standby, and never trusts an unchecked one', async () => {
    const { url } = await freshDatabase({ empty: true });
    const pool = createPool(url, 1);
    pools.push(pool);
    const monitor = new ReplicaMonitor(pool, 5_000);
    expect(monitor.state()).toEqual({ usable: false, reason: 'unchecked', lagMs: null, replayLsn: null });
    expect(await monitor.check()).toEqual({ usable: false, reason: 'not_a_standby', lagMs: null, replayLsn: null });
    // However far a write fence reaches, a primary posing as the replica is never read as one.
    expect(await monitor.caughtUpTo(parseLsn('0/0'))).toBe(false);
  });

  it('reports an unreachable replica, and keeps reporting it until it answers', async () => {
    const pool = createPool('postgres://postgres@127.0.0.1:1/keel', 1, { connectionTimeoutMillis: 1_000 });
    pools.push(pool);
    const monitor = new ReplicaMonitor(pool, 5_000);
    expect(await monitor.check()).toEqual({ usable: false, reason: 'unreachable', lagMs: null, replayLsn: null });
    expect(await monitor.check()).toMatchObject({ usable: false, reason: 'unreachable' });
  });
});
