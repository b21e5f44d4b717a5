import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { migrateDatabase } from '../../lib/db/migrate';
import { listExecutions } from '../../lib/queries/executions';
import { catalogSnapshot } from '../support/catalog';
import { freshDatabase } from '../support/database';

const BOOTSTRAP = readFileSync('lib/db/bootstrap/oxide-batch.sql', 'utf8');
const run = promisify(execFile);

/** A runtime-owned oxide_batch schema: the bootstrap, plus a column Keel does not know. */
async function attachedRuntimeSchema(version: number) {
  const database = await freshDatabase({ empty: true });
  await database.pool.query(BOOTSTRAP);
  await database.pool.query(`update oxide_batch.ob_schema_version set version = ${version}`);
  await database.pool.query(
    `alter table oxide_batch.ob_job_execution add column runtime_shard smallint not null default 7`,
  );
  await database.pool.query(`
    insert into oxide_batch.ob_job_definition (id, job_name, definition_revision, manifest_format, manifest_digest,
    manifest)
      values (1, 'runtime-job', 'r9', 1, decode(repeat('ab', 32), 'hex'), '{"delivery_mode":"at_least_once"}');
    insert into oxide_batch.ob_job_instance (id, job_name, instance_key)
    values (1, 'runtime-job', decode(repeat('cd', 32), 'hex'));
    insert into oxide_batch.ob_job_execution (id, job_instance_id, definition_id, attempt, status, version, owner_token,
    started_at)
      values (41, 1, 1, 1, 'STARTED', 12, decode(repeat('ef', 16), 'hex'), now());`);
  return database;
}

describe('migrator', () => {
  it('bootstraps oxide_batch at version 3 when absent, and a second run changes nothing', async () => {
    const { pool } = await freshDatabase({ empty: true });
    const first = await migrateDatabase(pool);
    expect(first).toEqual({ ok: true, value: { runtimeSchema: 'bootstrapped', runtimeVersion: 3 } });
    const before = await catalogSnapshot(pool, 'oxide_batch');
    const keelBefore = await catalogSnapshot(pool, 'keel');
    const second = await migrateDatabase(pool);
    expect(second).toEqual({ ok: true, value: { runtimeSchema: 'attached', runtimeVersion: 3 } });
    expect(await catalogSnapshot(pool, 'oxide_batch')).toEqual(before);
    expect(await catalogSnapshot(pool, 'keel')).toEqual(keelBefore);
    const binding = await pool.query<{ n: number }>('select octet_length(binding) as n from settle.store_binding');
    expect(binding.rows).toEqual([{ n: 32 }]);
  });

  it('leaves an attached schema at version 3 untouched and reads its rows', async () => {
    const { pool, db } = await attachedRuntimeSchema(3);
    const before = await catalogSnapshot(pool, 'oxide_batch');
    expect(before).toContain('column ob_job_execution.runtime_shard smallint notnull=true default=7 identity=');
    const rowsBefore = await pool.query('select * from oxide_batch.ob_job_execution order by id');

    const result = await migrateDatabase(pool);

    expect(result).toEqual({ ok: true, value: { runtimeSchema: 'attached', runtimeVersion: 3 } });
    expect(await catalogSnapshot(pool, 'oxide_batch')).toEqual(before);
    expect((await pool.query('select * from oxide_batch.ob_job_execution order by id')).rows).toEqual(rowsBefore.rows);
    const page = await listExecutions(db, {}, { staleThresholdMs: 900_000, ownerToken: Buffer.alloc(16) });
    expect(page.items).toEqual([
      expect.objectContaining({
        id: 41,
        jobName: 'runtime-job',
        status: 'STARTED',
        version: 12,
        owner: 'OTHER_PROCESS',
      }),
    ]);
    expect(JSON.stringify(page)).not.toContain('efefefef');
  });

  it('refuses a version 2 schema, says why, and creates nothing of its own', async () => {
    const { pool } = await attachedRuntimeSchema(2);
    const before = await catalogSnapshot(pool, 'oxide_batch');

    const result = await migrateDatabase(pool);

    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.code).toBe('RUNTIME_SCHEMA_TOO_OLD');
    expect(result.error.message).toMatch(/version 2; Keel needs version 3/);
    expect(await catalogSnapshot(pool, 'oxide_batch')).toEqual(before);
    const keel = await pool.query(`select count(*)::int as n from pg_namespace where nspname in ('keel', 'settle')`);
    expect(keel.rows[0].n).toBe(0);
  });

  it('refuses an oxide_batch schema that has no version table', async () => {
    const { pool } = await freshDatabase({ empty: true });
    await pool.query('create schema oxide_batch; create table oxide_batch.ob_job_execution (id bigint)');
    const result = await migrateDatabase(pool);
    expect(result).toMatchObject({ ok: false, error: { code: 'RUNTIME_SCHEMA_UNVERSIONED' } });
  });

  it('the CLI exits non-zero at version 2 and prints the reason', async () => {
    const { url } = await attachedRuntimeSchema(2);
    const failure = await run(
      process.execPath,
      ['--import', 'tsx', '--conditions=react-server', 'bin/keel.ts', 'migrate'],
      {
        env: { ...process.env, DATABASE_URL: url, KEEL_CHECKPOINT_KEY: 'ab'.repeat(32) },
      },
    ).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toContain('RUNTIME_SCHEMA_TOO_OLD');
    expect(failure?.stderr).toContain('oxide_batch schema is at version 2');
  });
});
