import { beforeAll, describe, expect, it } from 'vitest';
import { parseSettings } from '../../lib/config/settings';
import { seedDemo } from '../../lib/demo/seed';
import { readExecutionDetail } from '../../lib/queries/execution-detail';
import { type ExecutionCursor, listExecutions, parseExecutionCursor } from '../../lib/queries/executions';
import { listOrchestrationLeases, listProposals } from '../../lib/queries/recovery';
import { listRetryKeys } from '../../lib/queries/retry-keys';
import { freshDatabase, type TestDatabase } from '../support/database';

const KEY = Buffer.from('ab'.repeat(32), 'hex');
const context = { staleThresholdMs: 900_000, ownerToken: Buffer.alloc(16, 7) };

describe('console read models on demo data', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await freshDatabase();
    const settings = parseSettings({
      DATABASE_URL: database.url,
      KEEL_CHECKPOINT_KEY: KEY.toString('hex'),
      KEEL_DEMO: '1',
    });
    if (!settings.ok) throw new Error('settings');
    await seedDemo(database.db, settings.value);
  }, 120_000);

  it('pages executions by keyset without skipping or repeating a row', async () => {
    const seen: number[] = [];
    let cursor: ExecutionCursor | null = null;
    for (let page = 0; page < 100; page += 1) {
      const result = await listExecutions(database.db, { status: 'STARTED', cursor }, context);
      seen.push(...result.items.map((i) => i.id));
      if (!result.nextCursor) break;
      const next = parseExecutionCursor(result.nextCursor);
      if (next === 'invalid') throw new Error('the list gave out a cursor it refuses');
      cursor = next;
    }
    const expected = await database.pool.query(
      `select id::int from oxide_batch.ob_job_execution where status = 'STARTED' order by updated_at desc, id desc`,
    );
    expect(seen).toEqual(expected.rows.map((r) => r.id));
  });

  it('filters by job, staleness, search and updated range, and counts exactly below the cap', async () => {
    const stale = await listExecutions(database.db, { stale: '1' }, context);
    const staleCount = await database.pool.query(`select count(*)::int as n from oxide_batch.ob_job_execution
      where status in ('STARTING','STARTED','STOPPING') and updated_at < clock_timestamp() - interval '15 minutes'`);
    expect(stale.total).toEqual({ value: staleCount.rows[0].n, capped: false });
    expect(stale.items.every((i) => i.stale)).toBe(true);
    const job = await listExecutions(database.db, { job: 'import-ledger' }, context);
    expect(job.items.every((i) => i.jobName === 'import-ledger')).toBe(true);
    const byId = await listExecutions(database.db, { q: '42' }, context);
    expect(byId.items.map((i) => i.id)).toContain(42);
    const future = await listExecutions(database.db, { updatedFrom: '2999-01-01' }, context);
    expect(future.items).toEqual([]);
  });

  it('reads an execution with steps, fault state, history and audit, and never the owner token', async () => {
    const { rows } = await database.pool.query(`select job_execution_id::int as id from oxide_batch.ob_step_execution
      where jsonb_array_length(fault_state_payload->'entries') > 0 order by id limit 1`);
    const detail = await readExecutionDetail(database.db, rows[0].id, context);
    expect(detail).not.toBeNull();
    expect(detail!.steps.length).toBeGreaterThan(0);
    expect(detail!.steps.some((s) => s.faultState.kind !== 'empty')).toBe(true);
    expect(detail!.owner).toMatch(/ABSENT|OTHER_PROCESS/);
    const token = await database.pool.query(
      `select encode(owner_token, 'hex') as hex from oxide_batch.ob_job_execution where id = $1`,
      [rows[0].id],
    );
    if (token.rows[0].hex) expect(JSON.stringify(detail)).not.toContain(token.rows[0].hex);
    expect(await readExecutionDetail(database.db, 987_654_321, context)).toBeNull();
  });

  it('lists proposals and orchestration leases with their authentication status', async () => {
    expect((await listProposals(database.db, {})).items).toEqual([]);
    const leases = await listOrchestrationLeases(database.db, KEY);
    expect(leases.items.length).toBe(6);
    expect(leases.items.every((l) => l.authenticated)).toBe(true);
    expect(leases.items.some((l) => l.expired)).toBe(true);
    const wrongKey = await listOrchestrationLeases(database.db, Buffer.alloc(32, 1));
    expect(wrongKey.items.every((l) => !l.authenticated)).toBe(true);
    expect(JSON.stringify(leases)).not.toContain(KEY.toString('hex'));
  });

  it('filters retry keys by phase, category and job, and lists corrupt envelopes apart', async () => {
    const write = await listRetryKeys(database.db, { only: 'keys', phase: 'write', limit: 500 });
    expect(write.rows.length).toBeGreaterThan(0);
    expect(write.rows.every((r) => r.kind === 'key' && r.phase === 'write')).toBe(true);
    const timeouts = await listRetryKeys(database.db, {
      only: 'keys',
      category: 'TIMEOUT',
      job: 'settle-invoices',
      limit: 500,
    });
    expect(
      timeouts.rows.every((r) => r.kind === 'key' && r.category === 'TIMEOUT' && r.jobName === 'settle-invoices'),
    ).toBe(true);
    const corrupt = await listRetryKeys(database.db, { only: 'corrupt', limit: 500 });
    expect(corrupt.rows.length).toBeGreaterThanOrEqual(3);
    expect(corrupt.rows.every((r) => r.kind === 'corrupt' && r.message.length > 0)).toBe(true);
  });
});
