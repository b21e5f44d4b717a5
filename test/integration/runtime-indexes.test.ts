import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createDatabase } from '../../lib/db/client';
import { migrateDatabase } from '../../lib/db/migrate';
import { missingRuntimeIndexes, RUNTIME_INDEXES } from '../../lib/db/runtime-indexes';
import { listExecutions, UNINDEXED_WARNING } from '../../lib/queries/executions';
import { freshDatabase } from '../support/database';

const run = promisify(execFile);
const context = { staleThresholdMs: 900_000, ownerToken: Buffer.alloc(16) };

describe('runtime indexes', () => {
  it('come with a schema Keel bootstrapped', async () => {
    const { pool } = await freshDatabase();
    expect(await missingRuntimeIndexes(pool)).toEqual([]);
  });

  it('are only printed for an attached schema until applied; meanwhile the view says it runs unindexed', async () => {
    const { pool, url, newPool } = await freshDatabase({ empty: true });
    await pool.query(readFileSync('lib/db/bootstrap/oxide-batch.sql', 'utf8'));
    expect((await migrateDatabase(pool)).ok).toBe(true);
    expect(await missingRuntimeIndexes(pool)).toEqual(RUNTIME_INDEXES.map((i) => i.name));

    const before = await listExecutions(createDatabase(pool), {}, context);
    expect(before.indexWarning).toBe(UNINDEXED_WARNING);
    expect((await listExecutions(createDatabase(pool), { status: 'STARTED' }, context)).indexWarning).toBeNull();

    const env = { ...process.env, DATABASE_URL: url, KEEL_CHECKPOINT_KEY: 'ab'.repeat(32) };
    const cli = ['--import', 'tsx', '--conditions=react-server', 'bin/keel.ts', 'runtime-indexes'];
    const printed = await run(process.execPath, cli, { env });
    expect(printed.stdout).toContain('CREATE INDEX CONCURRENTLY IF NOT EXISTS keel_ob_job_execution_updated_idx');
    expect(await missingRuntimeIndexes(pool)).toHaveLength(RUNTIME_INDEXES.length);

    await run(process.execPath, [...cli, '--apply'], { env });
    expect(await missingRuntimeIndexes(pool)).toEqual([]);
    const after = await listExecutions(createDatabase(newPool(2)), {}, context);
    expect(after.indexWarning).toBeNull();
  });
});
