import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { postgresCheckpointStore } from '../../lib/adapters/checkpoint-store';
import { createDatabase } from '../../lib/db/client';
import { authenticationTagHex, type DurableCheckpoint } from '../../lib/domain/checkpoint';
import { orchestrationEvidenceDigestHex } from '../../lib/domain/recovery';
import { freshDatabase } from '../support/database';
import { MINUTE, testCheckpoint } from '../support/recovery-fixtures';

const { db, pool, newPool } = await freshDatabase();
const KEY = randomBytes(32);
const store = postgresCheckpointStore(db, KEY);
let counter = 0;
const nextId = () => `orch-${(counter += 1)}-${randomBytes(3).toString('hex')}`;

async function storedRow(executionId: string) {
  const { rows } = await pool.query('select * from keel.durable_checkpoint where execution_id = $1', [executionId]);
  return rows[0];
}

async function saved(checkpoint: DurableCheckpoint) {
  const result = await store.save(checkpoint);
  if (!result.ok) throw new Error(`save: ${result.error.kind}`);
  return result.value;
}

describe('CheckpointStore over Postgres', () => {
  it('seals with the server key on save and loads back an authenticated checkpoint', async () => {
    const id = nextId();
    const result = await saved(
      testCheckpoint(id, { ownerId: 'worker-a', fencingToken: 1, expiresAt: Date.now() + MINUTE }),
    );
    expect(result.authenticationTag).toBe(authenticationTagHex(result, KEY));
    const loaded = await store.load(id);
    expect(loaded.ok && loaded.value?.checkpoint).toEqual(result);
    expect(loaded.ok && store.verify(loaded.value!.checkpoint)).toBe(true);
    expect(postgresCheckpointStore(db, randomBytes(32)).verify(result)).toBe(false);
    expect(JSON.stringify(await storedRow(id))).not.toContain(KEY.toString('hex'));
    expect(await store.load('absent')).toEqual({ ok: true, value: null });
  });

  it('refuses an invalid checkpoint and writes nothing', async () => {
    const id = nextId();
    const base = testCheckpoint(id, { ownerId: 'worker-a', fencingToken: 1, expiresAt: 10 });
    for (const bad of [
      { ...base, lease: { ...base.lease, ownerId: '  ' } },
      { ...base, lease: { ...base.lease, fencingToken: 0 } },
      { ...base, governingSpec: 'other-spec' },
      { ...base, snapshots: { ...base.snapshots, policyDigest: '' } },
    ]) {
      const result = await store.save(bad);
      expect(result.ok ? 'saved' : result.error.kind).toBe('InvalidCheckpoint');
    }
    expect(await storedRow(id)).toBeUndefined();
  });

  it('replaces only with a higher fencing token, or the same token from the same owner', async () => {
    const id = nextId();
    const lease = { ownerId: 'worker-a', fencingToken: 5, expiresAt: 1_000 };
    await saved(testCheckpoint(id, lease));
    const progress = await store.save({ ...testCheckpoint(id, lease), completedNodeIds: ['start', 'charge'] });
    expect(progress.ok).toBe(true);
    const before = await storedRow(id);
    expect(await store.save(testCheckpoint(id, { ...lease, ownerId: 'worker-b' }))).toEqual({
      ok: false,
      error: { kind: 'StaleLease' },
    });
    expect(await store.save(testCheckpoint(id, { ...lease, fencingToken: 4 }))).toEqual({
      ok: false,
      error: { kind: 'StaleLease' },
    });
    expect(await storedRow(id)).toEqual(before);
    expect((await store.save(testCheckpoint(id, { ownerId: 'worker-b', fencingToken: 6, expiresAt: 2_000 }))).ok).toBe(
      true,
    );
    expect(await storedRow(id)).toMatchObject({
      lease_owner: 'worker-b',
      fencing_token: 6,
      lease_expires_at_ms: 2_000,
    });
  });

  it('stores exactly one of two saves racing with the same new fencing token', async () => {
    for (const existing of [false, true]) {
      const id = nextId();
      if (existing) await saved(testCheckpoint(id, { ownerId: 'worker-a', fencingToken: 1, expiresAt: 1_000 }));
      const racers = ['worker-x', 'worker-y'].map((ownerId) => ({
        ownerId,
        store: postgresCheckpointStore(createDatabase(newPool(1)), KEY),
      }));
      const results = await Promise.all(
        racers.map(({ ownerId, store: racer }) =>
          racer.save(testCheckpoint(id, { ownerId, fencingToken: 2, expiresAt: 5_000 })),
        ),
      );
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      expect(results.filter((r) => !r.ok)).toEqual([{ ok: false, error: { kind: 'StaleLease' } }]);
      const winner = racers[results.findIndex((r) => r.ok)]!.ownerId;
      const loaded = await store.load(id);
      expect(loaded.ok && loaded.value?.checkpoint.lease).toEqual({
        ownerId: winner,
        fencingToken: 2,
        expiresAt: 5_000,
      });
      expect(loaded.ok && store.verify(loaded.value!.checkpoint)).toBe(true);
    }
  });

  it('refuses a row whose lease columns disagree with its tagged JSON, and exposes a forged tag', async () => {
    const id = nextId();
    await saved(testCheckpoint(id, { ownerId: 'worker-a', fencingToken: 3, expiresAt: 1_000 }));
    await pool.query('update keel.durable_checkpoint set fencing_token = 99 where execution_id = $1', [id]);
    const edited = await store.load(id);
    expect(edited.ok ? 'loaded' : edited.error.reason).toMatch(/disagree/);
    await pool.query(
      `update keel.durable_checkpoint set fencing_token = 3, authentication_tag = repeat('0', 64),
                        checkpoint = jsonb_set(checkpoint, '{authentication_tag}', to_jsonb(repeat('0', 64)))
                        where execution_id = $1`,
      [id],
    );
    const forged = await store.load(id);
    expect(forged.ok && forged.value !== null && store.verify(forged.value.checkpoint)).toBe(false);
  });

  it('holds the row for the transaction that loads it for update', async () => {
    const id = nextId();
    await saved(testCheckpoint(id, { ownerId: 'worker-a', fencingToken: 1, expiresAt: 1_000 }));
    const other = postgresCheckpointStore(createDatabase(newPool(1)), KEY);
    let competingDone = false;
    let competing: Promise<unknown> = Promise.resolve();
    await db.transaction(async (tx) => {
      const locked = await postgresCheckpointStore(tx, KEY).load(id, { forUpdate: true });
      expect(locked.ok && locked.value !== null).toBe(true);
      competing = other
        .save(testCheckpoint(id, { ownerId: 'worker-b', fencingToken: 2, expiresAt: 2_000 }))
        .then((r) => {
          competingDone = true;
          return r;
        });
      // Wait for the event itself: the competing save is blocked by this transaction's lock.
      const holder = await tx.execute<{ pid: number }>(sql`select pg_backend_pid() as pid`);
      const blockedBy = async () =>
        (
          await pool.query(`select count(*)::int as n from pg_stat_activity where $1 = any(pg_blocking_pids(pid))`, [
            holder.rows[0]!.pid,
          ])
        ).rows[0].n;
      while ((await blockedBy()) === 0) await new Promise((resolve) => setImmediate(resolve));
      expect(await blockedBy()).toBe(1);
      expect(competingDone).toBe(false);
    });
    expect(await competing).toMatchObject({ ok: true });
  });

  it('lists expired, authenticated leases as takeover candidates, keyset-paged', async () => {
    const { rows } = await pool.query<{ now: number }>(
      `select (extract(epoch from clock_timestamp()) * 1000)::bigint as now`,
    );
    const now = Number(rows[0]!.now);
    await pool.query('delete from keel.durable_checkpoint');
    const expired = await Promise.all(
      [1, 2, 3].map((n) =>
        saved(testCheckpoint(`expired-${n}`, { ownerId: `w${n}`, fencingToken: n, expiresAt: now - n * MINUTE })),
      ),
    );
    await saved(testCheckpoint('live', { ownerId: 'w9', fencingToken: 9, expiresAt: now + 10 * MINUTE }));
    await saved(testCheckpoint('forged', { ownerId: 'w8', fencingToken: 8, expiresAt: now - 30 * MINUTE }));
    await pool.query(`update keel.durable_checkpoint set authentication_tag = repeat('0', 64),
                        checkpoint = jsonb_set(checkpoint, '{authentication_tag}', to_jsonb(repeat('0', 64)))
                        where execution_id = 'forged'`);

    const first = await store.takeoverCandidates({ limit: 2 });
    expect(first.unauthenticated).toBe(1);
    expect(first.candidates.map((c) => c.executionId)).toEqual(['expired-3']);
    expect(first.nextCursor).toEqual({ expiresAtMs: now - 3 * MINUTE, executionId: 'expired-3' });
    const second = await store.takeoverCandidates({ after: first.nextCursor, limit: 2 });
    expect(second.candidates.map((c) => c.executionId)).toEqual(['expired-2', 'expired-1']);
    expect(second.nextCursor).toBeNull();
    const candidate = second.candidates[1]!;
    const checkpoint = expired[0]!;
    expect(candidate).toEqual({
      executionId: 'expired-1',
      leaseOwner: 'w1',
      fencingToken: 1,
      expiresAtMs: checkpoint.lease.expiresAt,
      authenticationTag: checkpoint.authenticationTag,
      evidenceDigestHex: (
        orchestrationEvidenceDigestHex({
          executionId: 'expired-1',
          authenticationTag: checkpoint.authenticationTag,
          fencingToken: 1,
          expiresAtMs: checkpoint.lease.expiresAt,
          leaseOwner: 'w1',
        }) as { value: string }
      ).value,
    });
    expect(Math.abs(second.serverTimeMs - Date.now())).toBeLessThan(5_000);
  });
});
