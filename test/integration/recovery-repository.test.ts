import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { postgresRecoveryRepository } from '../../lib/adapters/recovery-repository';
import { createDatabase, createPool } from '../../lib/db/client';
import { snapshotEvidenceDigestHex } from '../../lib/domain/recovery';
import vectors from '../fixtures/vectors.json';
import { freshDatabase } from '../support/database';
import { confirmTakeover } from '../../lib/services/confirm-takeover';
import { proposeRecovery } from '../../lib/services/propose-recovery';
import { actor, recoveryDeps, seedDefinition, seedExecution, seedStep } from '../support/recovery-fixtures';

const { db, pool, url } = await freshDatabase();
// Vector rows use small fixed ids; keep the identities clear of them.
await pool.query(`select setval(pg_get_serial_sequence('oxide_batch.ob_job_execution', 'id'), 1000),
                         setval(pg_get_serial_sequence('oxide_batch.ob_step_execution', 'id'), 1000)`);

const CURRENT = randomBytes(16);

/**
 * The evidence digest of a stepless execution with no markers, written out by hand from
 * the canonical writer's rules (docs/design.md#canonical-writer), independent of Keel's writer.
 */
function independentEvidenceDigest(e: {
  id: number;
  status: string;
  attempt: number;
  version: number;
  owner: string;
  updatedAtMs: number;
}): string {
  const u64 = (value: number | bigint) => {
    const buf = Buffer.alloc(8);
    buf.writeBigUInt64BE(BigInt(value));
    return buf;
  };
  const str = (value: string) => Buffer.concat([u64(Buffer.byteLength(value)), Buffer.from(value)]);
  return createHash('sha256')
    .update(
      Buffer.concat([
        str('oxide-batch.recovery-evidence.v1'),
        u64(e.id),
        str(e.status),
        u64(e.attempt),
        u64(e.version),
        str(e.owner),
        str('AFTER_EPOCH'),
        u64(Math.floor(e.updatedAtMs / 1000)),
        u64((e.updatedAtMs % 1000) * 1_000_000),
        str('NO_STEP'),
        u64(0),
        u64(0),
        u64(0),
        u64(0),
      ]),
    )
    .digest('hex');
}
const repository = postgresRecoveryRepository(db);

async function snapshotOf(executionId: number, token: Buffer = CURRENT) {
  const result = await repository.recoverySnapshot(executionId, token);
  if (!result.ok) throw new Error(`snapshot: ${result.error.kind}`);
  return result.value;
}

/** Sizes a checkpoint payload so `pg_column_size` of the stored jsonb is exactly `target`. */
async function sizeCheckpointPayload(stepId: number, target: number) {
  await pool.query(`update oxide_batch.ob_step_execution set checkpoint_payload = '{"pad": "a"}' where id = $1`, [
    stepId,
  ]);
  const { rows } = await pool.query(
    'select pg_column_size(checkpoint_payload) as n from oxide_batch.ob_step_execution where id = $1',
    [stepId],
  );
  const pad = 'a'.repeat(1 + target - rows[0].n);
  await pool.query(
    `update oxide_batch.ob_step_execution set checkpoint_payload = jsonb_build_object('pad', $2::text) where id = $1`,
    [stepId, pad],
  );
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
    await pool.query(
      `insert into oxide_batch.ob_flow_decision (job_execution_id, decision_ordinal, source_step_logical_id, exit_code)
       values (7, 0, 'load', 'COMPLETED')`,
    );
    const snapshot = await snapshotOf(7);
    expect(snapshot).toMatchObject({
      executionId: 7,
      status: 'STARTED',
      attempt: 2,
      version: 3,
      owner: 'OTHER_PROCESS',
      latestStep: null,
    });
    expect(snapshot.markers).toEqual(vector.input.markers);
    expect(snapshotEvidenceDigestHex(snapshot)).toEqual({ ok: true, value: vector.digest });
  });

  it('reproduces vector 2 (UNKNOWN, latest step with a 57-byte checkpoint, no delivery mode, no owner)', async () => {
    const vector = vectors.evidenceDigest[1]!;
    const definition = await seedDefinition(db, {});
    await seedExecution(db, {
      id: 42,
      definitionId: definition.id,
      status: 'UNKNOWN',
      version: 5,
      updatedAt: new Date(vector.input.updatedAtMs),
      ownerToken: null,
    });
    await seedStep(db, { id: 8, executionId: 42, logicalId: 'first', status: 'COMPLETED' });
    await seedStep(db, {
      id: 9,
      executionId: 42,
      logicalId: 'second',
      status: 'STARTED',
      checkpointPayload: { pad: 'a' },
    });
    await sizeCheckpointPayload(9, 57);
    const snapshot = await snapshotOf(42);
    expect(snapshot.latestStep).toEqual(vector.input.step);
    expect(snapshot.markers).toEqual(vector.input.markers);
    expect(snapshot.owner).toBe('ABSENT');
    expect(snapshotEvidenceDigestHex(snapshot)).toEqual({ ok: true, value: vector.digest });
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
    const wire = JSON.stringify(returned, (_, value) =>
      value?.type === 'Buffer' ? Buffer.from(value.data).toString('hex') : value,
    );
    expect(wire).not.toContain(CURRENT.toString('hex'));
    expect(wire).not.toContain('owner_token');
  });

  it('derives the markers from the latest step, the failure category, partitions and the delivery mode', async () => {
    const atLeastOnce = await seedDefinition(db, { deliveryMode: 'at_least_once' });
    const atomic = await seedDefinition(db, { deliveryMode: 'atomic_same_resource' });
    const a = await seedExecution(db, { definitionId: atomic.id });
    const first = await seedStep(db, { executionId: a.id, logicalId: 'one', status: 'UNKNOWN' });
    await seedStep(db, { executionId: a.id, logicalId: 'two', status: 'STARTED' });
    await pool.query(
      `insert into oxide_batch.ob_step_partition (step_execution_id, partition_key, partition_ordinal, status)
       values ($1, 'p0', 0, 'STARTED')`,
      [first],
    );
    expect((await snapshotOf(a.id)).markers).toEqual({
      unknownCommit: false,
      completedPartition: false,
      committedFlowDecision: false,
      ambiguousExternalEffect: false,
    });

    await seedStep(db, { executionId: a.id, logicalId: 'three', status: 'UNKNOWN' });
    await pool.query(
      `insert into oxide_batch.ob_step_partition (step_execution_id, partition_key, partition_ordinal, status)
       values ($1, 'p1', 1, 'COMPLETED')`,
      [first],
    );
    expect((await snapshotOf(a.id)).markers).toMatchObject({ unknownCommit: true, completedPartition: true });

    const b = await seedExecution(db, {
      definitionId: atLeastOnce.id,
      status: 'STARTED',
      failure: { category: 'UNKNOWN_COMMIT', id: 5 },
    });
    expect((await snapshotOf(b.id)).markers).toEqual({
      unknownCommit: true,
      completedPartition: false,
      committedFlowDecision: false,
      ambiguousExternalEffect: true,
    });
  });

  it('reads updated_at and the clock as the runtime does: rounded, rows 0, 300, 500, 700 us past a ms', async () => {
    const definition = await seedDefinition(db, { deliveryMode: 'atomic_same_resource' });
    const deps = recoveryDeps(db);
    let agreeing = 0;
    let truncatedAgreeing = 0;
    for (const offsetUs of [0, 300, 500, 700]) {
      const execution = await seedExecution(db, { definitionId: definition.id, ownerToken: randomBytes(16) });
      // A stale row an hour old, on a whole second plus the offset.
      await pool.query(
        `update oxide_batch.ob_job_execution set updated_at = date_trunc('second',
         clock_timestamp()) - interval '1 hour' + $2::int * interval '1 microsecond' where id = $1`,
        [execution.id, offsetUs],
      );
      const secondMs = Number(
        (
          await pool.query(
            `select (extract(epoch from date_trunc('second', updated_at)) * 1000)::bigint as ms
             from oxide_batch.ob_job_execution where id = $1`,
            [execution.id],
          )
        ).rows[0].ms,
      );
      const before = Date.now();
      const snapshot = await snapshotOf(execution.id);
      expect(snapshot.updatedAtMs).toBe(secondMs + (offsetUs >= 500 ? 1 : 0));
      expect(Math.abs(snapshot.serverTimeMs - before)).toBeLessThan(5_000);
      // The runtime's own expression, run independently against the row.
      const { rows } = await pool.query(
        `select (extract(epoch from updated_at) * 1000)::bigint as runtime_ms,
                (extract(epoch from date_trunc('milliseconds', updated_at)) * 1000)::bigint as truncated_ms
         from oxide_batch.ob_job_execution where id = $1`,
        [execution.id],
      );
      expect(snapshot.updatedAtMs).toBe(Number(rows[0].runtime_ms));
      const independent = independentEvidenceDigest({
        id: execution.id,
        status: 'STARTED',
        attempt: 1,
        version: 7,
        owner: 'OTHER_PROCESS',
        updatedAtMs: Number(rows[0].runtime_ms),
      });
      const truncated = independentEvidenceDigest({
        id: execution.id,
        status: 'STARTED',
        attempt: 1,
        version: 7,
        owner: 'OTHER_PROCESS',
        updatedAtMs: Number(rows[0].truncated_ms),
      });
      // Every digest Keel shows or stores: the snapshot's, the
      // proposal's, and the one written into ob_recovery_decision.
      const proposed = await proposeRecovery(deps, actor('operator'), {
        target: 'batch',
        reason: 'owner silent',
        executionId: execution.id,
      });
      if (!proposed.ok) throw new Error(proposed.error.code);
      const { proposal } = proposed.value;
      const confirmed = await confirmTakeover(deps, actor('approver'), {
        proposalId: proposal.id,
        evidenceDigest: proposal.evidenceDigestHex,
        expectedVersion: proposal.expectedVersion,
        resultingStatus: 'FAILED',
      });
      expect(confirmed.ok).toBe(true);
      const decision = (
        await pool.query(
          `select encode(evidence_digest, 'hex') as d from oxide_batch.ob_recovery_decision
           where job_execution_id = $1`,
          [execution.id],
        )
      ).rows[0].d;
      const keel = snapshotEvidenceDigestHex(snapshot);
      if (
        keel.ok &&
        keel.value === independent &&
        proposal.evidenceDigestHex === independent &&
        decision === independent
      )
        agreeing += 1;
      if (truncated === independent) truncatedAgreeing += 1;
    }
    expect(agreeing).toBe(4);
    // The truncating reading Keel used before agrees only below 500 us.
    expect(truncatedAgreeing).toBe(2);
  });

  it('reports a missing execution, a malformed token and an unreachable database as typed errors', async () => {
    expect(await repository.recoverySnapshot(987_654, CURRENT)).toEqual({
      ok: false,
      error: { kind: 'ExecutionNotFound', executionId: 987_654 },
    });
    expect(await repository.recoverySnapshot(7, CURRENT.subarray(0, 15))).toEqual({
      ok: false,
      error: { kind: 'InvalidOwnerToken' },
    });
    const closed = createPool(url, 1);
    await closed.end();
    expect(await postgresRecoveryRepository(createDatabase(closed)).recoverySnapshot(7, CURRENT)).toEqual({
      ok: false,
      error: { kind: 'Unavailable' },
    });
  });
});
