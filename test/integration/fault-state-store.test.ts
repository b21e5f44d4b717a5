import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { postgresFaultStateStore } from '../../lib/simulator/adapters/fault-state-store';
import { createDatabase, createPool } from '../../lib/db/client';
import { canonicalJsonFromPayload, EMPTY_CHECKSUM_HEX } from '../../lib/domain/fault-state';
import type { FaultStateBinding, RetryReservation } from '../../lib/simulator/ports/fault-state-store';
import vectors from '../fixtures/vectors.json';
import { freshDatabase } from '../support/database';
import { seedDefinition, seedExecution, seedStep } from '../support/recovery-fixtures';

const { db, pool, newPool, url } = await freshDatabase();

const CHECKPOINT = '2'.repeat(64);
const key = (byte: string) => byte.repeat(32);
const reservation = (k: string, ordinal: number, extra: Partial<RetryReservation> = {}): RetryReservation => ({
  key: k,
  phase: 'write',
  category: 'TIMEOUT',
  ordinal,
  checkpointDigest: CHECKPOINT,
  ...extra,
});

async function boundStep(options: { stateLimit?: number; status?: 'STARTED' | 'STOPPING' } = {}) {
  const definition = await seedDefinition(db);
  const execution = await seedExecution(db, { definitionId: definition.id });
  const stepId = await seedStep(db, { executionId: execution.id, status: options.status ?? 'STARTED' });
  const binding: FaultStateBinding = {
    stepExecutionId: stepId,
    jobExecutionId: execution.id,
    retryStateLimit: options.stateLimit ?? 4,
    classifierRevision: 'import_v1',
  };
  const store = postgresFaultStateStore(db);
  expect(await store.bind(binding)).toEqual({ ok: true, value: undefined });
  return { store, binding, stepId };
}

async function stepRow(stepId: number) {
  const { rows } = await pool.query(
    `select fault_state_payload as payload, encode(fault_state_checksum, 'hex') as checksum, version, rollback_count,
            read_retry_count, process_retry_count, write_retry_count
     from oxide_batch.ob_step_execution where id = $1`,
    [stepId],
  );
  return rows[0];
}

describe('FaultStateStore over Postgres', () => {
  it('is Unbound until bound, and refuses to bind a missing step or an out-of-range policy', async () => {
    const store = postgresFaultStateStore(db);
    const unbound = { ok: false, error: { kind: 'Unbound' } };
    expect(await store.reservedOrdinal(key('03'))).toEqual(unbound);
    expect(await store.reserve(reservation(key('03'), 1))).toEqual(unbound);
    expect(await store.resolve(key('03'))).toEqual(unbound);
    expect(await store.clearResolved()).toEqual(unbound);
    expect(await store.unresolved()).toEqual(unbound);
    expect(
      await store.bind({ stepExecutionId: 999_999, jobExecutionId: 1, retryStateLimit: 4, classifierRevision: 'v1' }),
    ).toEqual(unbound);
    const { binding } = await boundStep();
    expect(await postgresFaultStateStore(db).bind({ ...binding, retryStateLimit: 0 })).toEqual(unbound);
    expect(await postgresFaultStateStore(db).bind({ ...binding, classifierRevision: ' padded' })).toEqual(unbound);
  });

  it('writes the byte-compatible envelope of the shared vector and bumps exactly the write counters', async () => {
    const { store, stepId } = await boundStep();
    const before = await stepRow(stepId);
    expect(await store.reserve(reservation(key('03'), 1))).toEqual({ ok: true, value: undefined });
    const after = await stepRow(stepId);
    const vector = vectors.faultStateChecksum[1]!;
    expect(after.checksum).toBe(vector.sha256);
    const rebuilt = canonicalJsonFromPayload(after.payload);
    expect(rebuilt.ok && rebuilt.value.toString('utf8')).toBe(vector.canonicalJson);
    expect(createHash('sha256').update(vector.canonicalJson).digest('hex')).toBe(after.checksum);
    expect(after).toMatchObject({
      version: before.version + 1,
      rollback_count: before.rollback_count + 1,
      write_retry_count: before.write_retry_count + 1,
      read_retry_count: before.read_retry_count,
      process_retry_count: before.process_retry_count,
    });
  });

  it('accepts only the stored ordinal plus one, per key', async () => {
    const { store } = await boundStep();
    const stale = { ok: false, error: { kind: 'StaleReservation' } };
    expect(await store.reserve(reservation(key('03'), 2))).toEqual(stale);
    expect(await store.reserve(reservation(key('03'), 0))).toEqual(stale);
    expect((await store.reserve(reservation(key('03'), 1))).ok).toBe(true);
    expect(await store.reserve(reservation(key('03'), 1))).toEqual(stale);
    expect((await store.reserve(reservation(key('03'), 2, { phase: 'read' }))).ok).toBe(true);
    expect(await store.reservedOrdinal(key('03'))).toEqual({ ok: true, value: 2 });
    expect(await store.reservedOrdinal(key('04'))).toEqual({ ok: true, value: null });
  });

  it('counts non-read/process/write phases as rollbacks only', async () => {
    const { store, stepId } = await boundStep();
    const before = await stepRow(stepId);
    expect((await store.reserve(reservation(key('05'), 1, { phase: 'transaction' }))).ok).toBe(true);
    const after = await stepRow(stepId);
    expect(after.rollback_count).toBe(before.rollback_count + 1);
    expect([after.read_retry_count, after.process_retry_count, after.write_retry_count]).toEqual([0, 0, 0]);
  });

  it('refuses a new key at the state limit, counting resolved keys until they are cleared', async () => {
    const { store } = await boundStep({ stateLimit: 2 });
    expect((await store.reserve(reservation(key('03'), 1))).ok).toBe(true);
    expect((await store.reserve(reservation(key('04'), 1))).ok).toBe(true);
    await store.resolve(key('03'));
    expect(await store.unresolved()).toEqual({ ok: true, value: 1 });
    expect(await store.reserve(reservation(key('05'), 1))).toEqual({
      ok: false,
      error: { kind: 'CapacityExhausted', max: 2 },
    });
    // An existing key still advances.
    expect((await store.reserve(reservation(key('04'), 2))).ok).toBe(true);
  });

  it('refuses a step that is no longer STARTED through the guarded update, changing nothing', async () => {
    const { store, stepId } = await boundStep();
    await pool.query(`update oxide_batch.ob_step_execution set status = 'STOPPING' where id = $1`, [stepId]);
    const before = await stepRow(stepId);
    expect(await store.reserve(reservation(key('03'), 1))).toEqual({ ok: false, error: { kind: 'StaleReservation' } });
    expect(await stepRow(stepId)).toEqual(before);
  });

  it('reports corrupt stored state as Corrupt with the format error, and writes nothing', async () => {
    const { store, stepId, binding } = await boundStep();
    expect((await store.reserve(reservation(key('03'), 1))).ok).toBe(true);
    expect(await store.reserve(reservation(key('04'), 1, { checkpointDigest: '9'.repeat(64) }))).toEqual({
      ok: false,
      error: { kind: 'Corrupt', error: { kind: 'CheckpointMismatch' } },
    });
    await pool.query(
      `update oxide_batch.ob_step_execution set fault_state_checksum = decode(repeat('00', 32), 'hex') where id = $1`,
      [stepId],
    );
    const tampered = await stepRow(stepId);
    const checksumMismatch = { ok: false, error: { kind: 'Corrupt', error: { kind: 'ChecksumMismatch' } } };
    expect(await store.reserve(reservation(key('03'), 2))).toEqual(checksumMismatch);
    expect(await store.reservedOrdinal(key('03'))).toEqual(checksumMismatch);
    expect(await postgresFaultStateStore(db).bind(binding)).toEqual(checksumMismatch);
    expect(await stepRow(stepId)).toEqual(tampered);
    await pool.query(`update oxide_batch.ob_step_execution set fault_state_format = 2 where id = $1`, [stepId]);
    expect(await store.unresolved()).toEqual({
      ok: false,
      error: { kind: 'Corrupt', error: { kind: 'UnsupportedFormat' } },
    });
  });

  it('clears resolved keys only when none stay unresolved, inside the caller transaction', async () => {
    const { store, stepId } = await boundStep();
    expect((await store.reserve(reservation(key('03'), 1))).ok).toBe(true);
    expect((await store.reserve(reservation(key('04'), 1))).ok).toBe(true);
    await store.resolve(key('03'));
    const held = await stepRow(stepId);
    expect(await store.clearResolved()).toEqual({
      ok: false,
      error: { kind: 'Corrupt', error: { kind: 'CheckpointMismatch' } },
    });
    expect(await stepRow(stepId)).toEqual(held);

    await store.resolve(key('04'));
    expect(await store.unresolved()).toEqual({ ok: true, value: 0 });
    // A commit that rolls back takes the clearing with it.
    await db
      .transaction(async (tx) => {
        expect(await store.on(tx).clearResolved()).toEqual({ ok: true, value: undefined });
        throw new Error('checkpoint commit failed');
      })
      .catch(() => undefined);
    expect((await stepRow(stepId)).checksum).toBe(held.checksum);

    await store.resolve(key('03'));
    await store.resolve(key('04'));
    await db.transaction(async (tx) => {
      expect(await store.on(tx).clearResolved()).toEqual({ ok: true, value: undefined });
    });
    const cleared = await stepRow(stepId);
    expect(cleared.checksum).toBe(EMPTY_CHECKSUM_HEX);
    expect(cleared.payload).toEqual({ checkpoint: '0'.repeat(64), entries: [] });
    expect(await store.unresolved()).toEqual({ ok: true, value: 0 });
  });

  it('reports Unavailable when the database cannot be reached', async () => {
    const { binding } = await boundStep();
    // A pool of its own (not the harness's), so ending it here is the only end.
    const closed = createPool(url, 1);
    const store = postgresFaultStateStore(createDatabase(closed));
    await closed.end();
    expect(await store.bind(binding)).toEqual({ ok: false, error: { kind: 'Unavailable' } });
  });

  it('accepts exactly one of 10 concurrent reservations of the same next ordinal', async () => {
    const { binding, stepId } = await boundStep();
    const before = await stepRow(stepId);
    const stores = await Promise.all(
      Array.from({ length: 10 }, async () => {
        const store = postgresFaultStateStore(createDatabase(newPool(1)));
        expect((await store.bind(binding)).ok).toBe(true);
        return store;
      }),
    );
    const results = await Promise.all(stores.map((store) => store.reserve(reservation(key('07'), 1))));
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.filter((r) => !r.ok)).toEqual(Array(9).fill({ ok: false, error: { kind: 'StaleReservation' } }));
    const after = await stepRow(stepId);
    expect(after.version).toBe(before.version + 1);
    expect(after.rollback_count).toBe(before.rollback_count + 1);
    expect(await stores[0]!.reservedOrdinal(key('07'))).toEqual({ ok: true, value: 1 });
  });
});
