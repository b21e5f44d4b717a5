import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { postgresRecoveryRepository } from '../../lib/adapters/recovery-repository';
import { createDatabase, createPool } from '../../lib/db/client';
import { snapshotEvidenceDigestHex } from '../../lib/domain/recovery';
import vectors from '../fixtures/vectors.json';
import { freshDatabase } from '../support/database';
import { seedDefinition, seedExecution, seedStep } from '../support/recovery-fixtures';

const { db, pool, url } = await freshDatabase();
// Vector rows use small fixed ids; keep the identities clear of them.
await pool.query(`select setval(pg_get_serial_sequence('oxide_batch.ob_job_execution', 'id'), 1000),
                         setval(pg_get_serial_sequence('oxide_batch.ob_step_execution', 'id'), 1000)`);

const CURRENT = randomBytes(16);
const repository = postgresRecoveryRepository(db);

async function snapshotOf(executionId: number, token: Buffer = CURRENT) {
  const result = await repository.recoverySnapshot(executionId, token);
  if (!result.ok) throw new Error(`snapshot: ${result.error.kind}`);
  return result.value;
}

/** Sizes a checkpoint payload so `pg_column_size` of the stored jsonb is exactly `target`. */
async function sizeCheckpointPayload(stepId: number, target: number) {
  await pool.query(`update oxide_batch.ob_step_execution set checkpoint_payload = '{"pad": "a"}' where id = $1`, [stepId]);
  const { rows } = await pool.query('select pg_column_size(checkpoint_payload) as n from oxide_batch.ob_step_execution where id = $1', [stepId]);
  const pad = 'a'.repeat(1 + target - rows[0].n);
  await pool.query(`update oxide_batch.ob_step_execution set checkpoint_payload = jsonb_build_object('pad', $2::text) where id = $1`, [stepId, pad]);
}

describe('RecoveryRepository over Postgres', () => {
  it('reproduces the first shared evidence vector from rows (no step, a flow decision, another owner)', async () => {
    const vector = vectors.evidenceDigest[0]!;
    const definition = await seedDefinition(db, { deliveryMode: 'atomic_same_resource' });
    await seedExecution(db, {
      id: 7,
      definitionId: definition.id,
      status: 'STARTED',
      attempt: 2,
      version: 3,
      updatedAt: new Date(vector.input.updatedAtMs),
      ownerToken: randomBytes(16),
    });
    await pool.query(`insert into oxide_batch.ob_flow_decision (job_execution_id, decision_ordinal, source_step_logical_id, exit_code) values (7, 0, 'load', 'COMPLETED')`);
    const snapshot = await snapshotOf(7);
    expect(snapshot).toMatchObject({ executionId: 7, status: 'STARTED', attempt: 2, version: 3, owner: 'OTHER_PROCESS', latestStep: null });
    expect(snapshot.markers).toEqual(vector.input.markers);
    expect(snapshotEvidenceDigestHex(snapshot)).toBe(vector.digest);
  });

  it('reproduces the second vector (UNKNOWN, latest step with a 57-byte checkpoint, no delivery mode, no owner)', async () => {
    const vector = vectors.evidenceDigest[1]!;
    const definition = await seedDefinition(db, {});
    await seedExecution(db, { id: 42, definitionId: definition.id, status: 'UNKNOWN', version: 5, updatedAt: new Date(vector.input.updatedAtMs), ownerToken: null });
    await seedStep(db, { id: 8, executionId: 42, logicalId: 'first', status: 'COMPLETED' });
    await seedStep(db, { id: 9, executionId: 42, logicalId: 'second', status: 'STARTED', checkpointPayload: { pad: 'a' } });
    await sizeCheckpointPayload(9, 57);
    const snapshot = await snapshotOf(42);
    expect(snapshot.latestStep).toEqual(vector.input.step);
    expect(snapshot.markers).toEqual(vector.input.markers);
    expect(snapshot.owner).toBe('ABSENT');
    expect(snapshotEvidenceDigestHex(snapshot)).toBe(vector.digest);
  });

  it('compares the owner token in SQL and never returns it', async () => {
    const definition = await seedDefinition(db, { deliveryMode: 'atomic_same_resource' });
    const mine = await seedExecution(db, { definitionId: definition.id, ownerToken: CURRENT });
    const theirs = await seedExecution(db, { definitionId: definition.id });
    const nobody = await seedExecution(db, { definitionId: definition.id, ownerToken: null });
    // Watch every row the adapter's statements bring back over the wire.
    const watched = createPool(url, 1);
    const returned: unknown[] = [];
    const query = watched.query.bind(watched) as (...args: unknown[]) => Promise<{ rows: unknown[] }>;
    (watched as unknown as { query: unknown }).query = async (...args: unknown[]) => {
      const result = await query(...args);
      returned.push(...result.rows);
      return result;
    };
    const watchedRepository = postgresRecoveryRepository(createDatabase(watched));
    const owners = [];
    for (const id of [mine.id, theirs.id, nobody.id]) {
      const result = await watchedRepository.recoverySnapshot(id, CURRENT);
      owners.push(result.ok ? result.value.owner : result.error.kind);
    }
    await watched.end();
    expect(owners).toEqual(['CURRENT_PROCESS', 'OTHER_PROCESS', 'ABSENT']);
    expect(returned).toHaveLength(3);
    const wire = JSON.stringify(returned, (_, value) => (value?.type === 'Buffer' ? Buffer.from(value.data).toString('hex') : value));
    expect(wire).not.toContain(CURRENT.toString('hex'));
    expect(wire).not.toContain('owner_token');
  });

  it('derives the markers from the latest step, the failure category, partitions and the delivery mode', async () => {
    const atLeastOnce = await seedDefinition(db, { deliveryMode: 'at_least_once' });
    const atomic = await seedDefinition(db, { deliveryMode: 'atomic_same_resource' });
    const a = await seedExecution(db, { definitionId: atomic.id });
    const first = await seedStep(db, { executionId: a.id, logicalId: 'one', status: 'UNKNOWN' });
    await seedStep(db, { executionId: a.id, logicalId: 'two', status: 'STARTED' });
    await pool.query(`insert into oxide_batch.ob_step_partition (step_execution_id, partition_key, partition_ordinal, status) values ($1, 'p0', 0, 'STARTED')`, [first]);
    expect((await snapshotOf(a.id)).markers).toEqual({ unknownCommit: false, completedPartition: false, committedFlowDecision: false, ambiguousExternalEffect: false });

    await seedStep(db, { executionId: a.id, logicalId: 'three', status: 'UNKNOWN' });
    await pool.query(`insert into oxide_batch.ob_step_partition (step_execution_id, partition_key, partition_ordinal, status) values ($1, 'p1', 1, 'COMPLETED')`, [first]);
    expect((await snapshotOf(a.id)).markers).toMatchObject({ unknownCommit: true, completedPartition: true });

    const b = await seedExecution(db, { definitionId: atLeastOnce.id, status: 'STARTED', failure: { category: 'UNKNOWN_COMMIT', id: 5 } });
    expect((await snapshotOf(b.id)).markers).toEqual({ unknownCommit: true, completedPartition: false, committedFlowDecision: false, ambiguousExternalEffect: true });
  });

  it('reads updated_at truncated to milliseconds and the server clock', async () => {
    const definition = await seedDefinition(db, { deliveryMode: 'atomic_same_resource' });
    const execution = await seedExecution(db, { definitionId: definition.id });
    await pool.query(`update oxide_batch.ob_job_execution set updated_at = '2030-01-02T03:04:05.678999Z' where id = $1`, [execution.id]);
    const before = Date.now();
    const snapshot = await snapshotOf(execution.id);
    expect(snapshot.updatedAtMs).toBe(Date.parse('2030-01-02T03:04:05.678Z'));
    expect(Math.abs(snapshot.serverTimeMs - before)).toBeLessThan(5_000);
  });

  it('reports a missing execution, a malformed token and an unreachable database as typed errors', async () => {
    expect(await repository.recoverySnapshot(987_654, CURRENT)).toEqual({ ok: false, error: { kind: 'ExecutionNotFound', executionId: 987_654 } });
    expect(await repository.recoverySnapshot(7, CURRENT.subarray(0, 15))).toEqual({ ok: false, error: { kind: 'InvalidOwnerToken' } });
    const closed = createPool(url, 1);
    await closed.end();
    expect(await postgresRecoveryRepository(createDatabase(closed)).recoverySnapshot(7, CURRENT)).toEqual({ ok: false, error: { kind: 'Unavailable' } });
  });
});
