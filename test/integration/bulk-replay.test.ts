import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { bulkPreviewSchema } from '../../app/actions/settlement-schemas';
import { postgresSettlementUnitOfWork } from '../../lib/adapters/settlement-replay';
import { postgresSettlementStore } from '../../lib/simulator/adapters/settlement-store';
import { postgresUserUnitOfWork } from '../../lib/adapters/user-directory';
import { createDatabase } from '../../lib/db/client';
import type { Actor } from '../../lib/domain/actor';
import { selectionFilter } from '../../lib/domain/dead-letter-filter';
import type { Role } from '../../lib/domain/roles';
import { DEFAULT_RETRY_POLICY, type FailureCode } from '../../lib/domain/settlement';
import {
  bulkReplayItems,
  bulkReplayProgress,
  cancelBulkReplay,
  previewBulkReplay,
  startBulkReplay,
} from '../../lib/services/bulk-replay';
import { discardDeadLetter, replayDeadLetter } from '../../lib/services/dead-letter-actions';
import { bulkReplayOperationId } from '../../lib/services/settlement-operation-id';
import { changeUserRole, setUserDisabled } from '../../lib/services/users';
import { toDeadLetterFilter } from '../../lib/queries/settlements-types';
import { action } from '../../lib/server/action';
import { runBulkReplayBatches, startBulkReplayWorker } from '../../lib/workers/bulk-replay-worker';
import { actionDepsFor } from '../support/actions';
import { freshDatabase } from '../support/database';
import { bulkJobActors, insertKeelUsers } from '../support/keel-users';

const { pool, db, url, newPool } = await freshDatabase();
const deps = { unitOfWork: postgresSettlementUnitOfWork(db) };
const { support, admin, viewer } = await bulkJobActors(pool);
const T0 = 1_700_000_000_000;

/** The preview action's own wiring (app/actions/settlements.ts), on this database, signed in as `actor`. */
const previewAction = (actor: Actor) =>
  action(
    bulkPreviewSchema,
    'settlement.bulk_replay.preview',
    async (who, input) => {
      const filter = input.receiptIds ? selectionFilter(input.receiptIds) : toDeadLetterFilter(input.filters);
      return previewBulkReplay(deps, who, { filter, note: input.note, action: input.action });
    },
    { deps: actionDepsFor(db, actor) },
  );

/** Dead letters `<prefix>00000`..: chunked, since the one-place trigger locks per row. */
async function deadLetters(prefix: string, count: number, reason: FailureCode = 'rpc', attempts = 6) {
  for (let start = 0; start < count; start += 5_000) {
    await pool.query(
      `insert into settle.dead_letters (receipt_id, finalized_at, attempts, reason, canonical_json, recorded_at_ms)
       select $1 || lpad(n::text, 6, '0'), 1, $2, $3, '{}', $4::bigint + n from generate_series($5::int, $6::int) n`,
      [prefix, attempts, reason, T0, start, Math.min(start + 4_999, count - 1)],
    );
  }
}

async function previewed(filter: Parameters<typeof previewBulkReplay>[2]['filter'], actor = support) {
  const preview = await previewBulkReplay(deps, actor, { filter, note: 'ledger outage of the 3rd' });
  if (!preview.ok) throw new Error(preview.error.code);
  return preview.value;
}

async function started(filter: Parameters<typeof previewBulkReplay>[2]['filter']) {
  const preview = await previewed(filter);
  const start = await startBulkReplay(deps, admin, { jobId: preview.jobId });
  expect(start).toMatchObject({ ok: true, value: { status: 'RUNNING', startedBy: { login: 'admin', role: 'admin' } } });
  return preview;
}

async function progress(jobId: number) {
  const read = await bulkReplayProgress(deps, viewer, jobId);
  if (!read.ok) throw new Error(read.error.code);
  return read.value;
}

/** Replays per receipt for a prefix: every value must be 1. */
async function replayCounts(prefix: string): Promise<Map<string, number>> {
  const { rows } = await pool.query(
    `select receipt_id, count(*)::int as n from keel.settlement_replay where starts_with(receipt_id, $1) group by 1`,
    [prefix],
  );
  return new Map(rows.map((r) => [r.receipt_id, r.n]));
}

describe('bulk replay preview', () => {
  it('freezes exactly the matching dead letters and returns the count and a sample', async () => {
    await deadLetters('pv-a', 30, 'rpc', 6);
    await deadLetters('pv-b', 10, 'backend', 2);
    const preview = await previewed({ reason: 'rpc', receiptIdPrefix: 'pv-', minAttempts: 6 });
    expect(preview.itemCount).toBe(30);
    expect(preview.sample).toHaveLength(20);
    expect(preview.sample[0]).toEqual({ receiptId: 'pv-a000000', reason: 'rpc', attempts: 6, recordedAtMs: T0 });
    const hour = 3_600_000;
    await pool.query(
      `insert into settle.dead_letters select 'age-' || h, 1, 1, 'rpc', '{}', $1::bigint - h * $2::bigint
       from unnest(array[1, 4, 6, 10]) h`,
      [preview.asOfMs, hour],
    );
    expect((await previewed({ receiptIdPrefix: 'age-', maxAgeMs: 5 * hour })).itemCount).toBe(2);
    expect((await previewed({ receiptIdPrefix: 'age-', minAgeMs: 5 * hour })).itemCount).toBe(2);
    expect((await previewed({ receiptIdPrefix: 'age-', minAgeMs: 2 * hour, maxAgeMs: 8 * hour })).itemCount).toBe(2);
    expect(
      (await previewed({ receiptIdPrefix: 'age-', minAgeMs: 2 * hour, maxAgeMs: 5 * hour })).sample.map(
        (i) => i.receiptId,
      ),
    ).toEqual(['age-4']);
    const { rows } = await pool.query(
      `select filter, status, item_count, created_by_login from keel.bulk_replay where id = $1`,
      [preview.jobId],
    );
    expect(rows[0]).toMatchObject({
      status: 'PREVIEWED',
      item_count: 30,
      created_by_login: 'support',
      filter: { reason: 'rpc', receiptIdPrefix: 'pv-', minAttempts: 6, asOfMs: preview.asOfMs },
    });
    const audit = await pool.query(
      `select outcome, reason from keel.audit_event where action = 'settlement.bulk_replay.preview' and target_id = $1`,
      [String(preview.jobId)],
    );
    expect(audit.rows).toEqual([{ outcome: 'APPLIED', reason: 'ledger outage of the 3rd' }]);
  });

  it('a selection freezes exactly the ticked dead letters still dead, replays each with its own result', async () => {
    await deadLetters('sel-', 6);
    const picked = ['sel-000004', 'sel-000001', 'sel-000001', 'sel-gone'];
    // The action turns the ticked ids into the filter: each once, sorted.
    const preview = await previewed(selectionFilter(picked));
    expect(preview.itemCount).toBe(2);
    expect(preview.sample.map((i) => i.receiptId)).toEqual(['sel-000001', 'sel-000004']);
    const { rows } = await pool.query(`select filter from keel.bulk_replay where id = $1`, [preview.jobId]);
    expect(rows[0].filter).toMatchObject({ receiptIds: ['sel-000001', 'sel-000004', 'sel-gone'] });
    await startBulkReplay(deps, admin, { jobId: preview.jobId });
    await runBulkReplayBatches(deps);
    expect((await progress(preview.jobId)).counts).toMatchObject({ replayed: 2, pending: 0 });
    const left = await pool.query(
      `select receipt_id from settle.dead_letters where starts_with(receipt_id, 'sel-') order by 1`,
    );
    expect(left.rows.map((r) => r.receipt_id)).toEqual(['sel-000000', 'sel-000002', 'sel-000003', 'sel-000005']);
  });

  it('a bulk discard deletes exactly the frozen dead letters, audits each with its JSON, replays none', async () => {
    await deadLetters('dis-', 4);
    const preview = await previewBulkReplay(deps, support, {
      filter: { receiptIds: ['dis-000000', 'dis-000002'] },
      note: 'test data',
      action: 'DISCARD',
    });
    if (!preview.ok) throw new Error(preview.error.code);
    expect(preview.value.itemCount).toBe(2);
    expect(await startBulkReplay(deps, admin, { jobId: preview.value.jobId })).toMatchObject({
      ok: true,
      value: { action: 'DISCARD', status: 'RUNNING' },
    });
    await pool.query(`delete from settle.dead_letters where receipt_id = 'dis-000002'`); // gone before the worker came
    await runBulkReplayBatches(deps);
    expect((await progress(preview.value.jobId)).counts).toMatchObject({
      discarded: 1,
      no_longer_dead_lettered: 1,
      replayed: 0,
      pending: 0,
    });
    const left = await pool.query(
      `select receipt_id from settle.dead_letters where starts_with(receipt_id, 'dis-') order by 1`,
    );
    expect(left.rows.map((r) => r.receipt_id)).toEqual(['dis-000001', 'dis-000003']);
    expect((await replayCounts('dis-')).size).toBe(0);
    const audit = await pool.query(
      `select action, reason, before->>'reason' as reason_code, after->>'bulkJob' as job from keel.audit_event
       where target_id = 'dis-000000'`,
    );
    expect(audit.rows).toEqual([
      { action: 'settlement.discard', reason: 'test data', reason_code: 'rpc', job: String(preview.value.jobId) },
    ]);
    const job = await pool.query(`select action, status from keel.bulk_replay where id = $1`, [preview.value.jobId]);
    expect(job.rows[0]).toEqual({ action: 'DISCARD', status: 'COMPLETED' });
  });

  it('refuses an empty, oversized or malformed selection, audited, and creates no job', async () => {
    const jobsBefore = (await pool.query(`select count(*)::int as n from keel.bulk_replay`)).rows[0].n;
    const selections: [string[], string][] = [
      [[], 'receiptIds'],
      [Array.from({ length: 1_001 }, (_, i) => `r-${i}`), 'receiptIds'],
      [['ok', ''], 'receiptIds.1'],
      [['bad\u0000id'], 'receiptIds.0'],
    ];
    for (const [receiptIds, field] of selections) {
      expect(await previewAction(support)({ filters: {}, receiptIds, note: 'n' })).toMatchObject({
        ok: false,
        code: 'INVALID_INPUT',
        fieldErrors: { [field]: expect.any(Array) },
      });
    }
    expect((await pool.query(`select count(*)::int as n from keel.bulk_replay`)).rows[0].n).toBe(jobsBefore);
    const refusals = await pool.query(
      `select reason from keel.audit_event
       where action = 'settlement.bulk_replay.preview' and code = 'INVALID_INPUT' order by id`,
    );
    expect(refusals.rows.map((r) => r.reason)).toEqual(selections.map(([, field]) => `Invalid input: ${field}.`));
  });

  it('never replays a dead letter recorded after the preview', async () => {
    await deadLetters('late-', 5);
    const preview = await started({ receiptIdPrefix: 'late-' });
    await deadLetters('late-x', 3); // matches the filter, but arrived after the snapshot
    await runBulkReplayBatches(deps);
    expect((await progress(preview.jobId)).counts).toMatchObject({ replayed: 5, pending: 0 });
    const left = await pool.query(
      `select receipt_id from settle.dead_letters where starts_with(receipt_id, 'late-') order by 1`,
    );
    expect(left.rows.map((r) => r.receipt_id)).toEqual(['late-x000000', 'late-x000001', 'late-x000002']);
  });

  it('refuses a bad filter, a missing note and the viewer role', async () => {
    const jobsBefore = (await pool.query(`select count(*)::int as n from keel.bulk_replay`)).rows[0].n;
    const refused = (field: string) => ({
      ok: false,
      code: 'INVALID_INPUT',
      fieldErrors: { [field]: expect.any(Array) },
    });
    const preview = previewAction(support);
    expect(await preview({ filters: { reason: 'nope' as never }, note: 'n' })).toMatchObject(refused('filters.reason'));
    expect(await preview({ filters: { minAttempts: 3, maxAttempts: 1 }, note: 'n' })).toMatchObject(
      refused('filters.maxAttempts'),
    );
    expect(await preview({ filters: {}, note: ' ' })).toMatchObject(refused('note'));
    expect(await previewAction(viewer)({ filters: {}, note: 'n' })).toMatchObject({ ok: false, code: 'FORBIDDEN' });
    // The service holds a caller without the wrapper to the role as well.
    expect(await previewBulkReplay(deps, viewer, { filter: {}, note: 'n' })).toMatchObject({
      ok: false,
      error: { code: 'FORBIDDEN' },
    });
    expect((await pool.query(`select count(*)::int as n from keel.bulk_replay`)).rows[0].n).toBe(jobsBefore);
  });

  it('refuses more than 100,000 items and keeps nothing of the attempt', async () => {
    await deadLetters('cap-', 100_000, 'rpc');
    await deadLetters('cap-z', 1, 'backend');
    const jobsBefore = (await pool.query('select count(*)::int as n from keel.bulk_replay')).rows[0].n;
    const refused = await previewBulkReplay(deps, support, {
      filter: { receiptIdPrefix: 'cap-' },
      note: 'everything',
    });
    expect(refused).toMatchObject({ ok: false, error: { code: 'PREVIEW_TOO_LARGE' } });
    expect((await pool.query('select count(*)::int as n from keel.bulk_replay')).rows[0].n).toBe(jobsBefore);
    expect(
      (await pool.query(`select count(*)::int as n from keel.bulk_replay_item where starts_with(receipt_id, 'cap-')`))
        .rows[0].n,
    ).toBe(0);
    const audit = await pool.query(
      `select outcome, code from keel.audit_event where action = 'settlement.bulk_replay.preview'
       and outcome = 'REFUSED' and code = 'PREVIEW_TOO_LARGE'`,
    );
    expect(audit.rows).toHaveLength(1);
    const atCap = await previewed({ receiptIdPrefix: 'cap-', reason: 'rpc' });
    expect(atCap.itemCount).toBe(100_000);
    expect(await cancelBulkReplay(deps, support, { jobId: atCap.jobId })).toMatchObject({
      ok: true,
      value: { counts: { cancelled: 100_000 } },
    });
  }, 120_000);
});

describe('running a bulk replay', () => {
  it('replays every item once, audits each, and reports per-item results that stay viewable', async () => {
    await deadLetters('run-', 40);
    const preview = await started({ receiptIdPrefix: 'run-' });
    // After the preview: one replayed alone, one discarded, one dead-lettered anew, and
    // one replayed under the item's own operation id.
    await replayDeadLetter(deps, support, { receiptId: 'run-000001', note: 'n', operationId: 'single-1' });
    await discardDeadLetter(deps, support, { receiptId: 'run-000002', note: 'n', operationId: 'discard-2' });
    await replayDeadLetter(deps, support, { receiptId: 'run-000003', note: 'n', operationId: 'single-3' });
    const store = postgresSettlementStore(db);
    const claim = await store.claimReceipt('run-000003', 'w', Date.now() + 1_000, 60_000);
    if (!claim.ok || !claim.value) throw new Error('claim failed');
    await store.recordClaimedOutcome(
      claim.value,
      { kind: 'Permanent', code: 'rpc' },
      DEFAULT_RETRY_POLICY,
      claim.value.leaseUntilMs - 1,
    );
    await replayDeadLetter(deps, support, {
      receiptId: 'run-000004',
      note: 'n',
      operationId: bulkReplayOperationId(preview.jobId, 'run-000004'),
    });

    expect(await runBulkReplayBatches(deps, { batchSize: 16 })).toBe(3);
    const { job, counts } = await progress(preview.jobId);
    expect(job).toMatchObject({ status: 'COMPLETED', itemCount: 40, processedCount: 40 });
    expect(counts).toEqual({
      pending: 0,
      replayed: 36,
      discarded: 0,
      requeued: 0,
      already_replayed: 1,
      no_longer_dead_lettered: 2,
      no_longer_retry_scheduled: 0,
      changed_since_preview: 1,
      cancelled: 0,
    });
    const results = await bulkReplayItems(deps, viewer, {
      jobId: preview.jobId,
      result: 'no_longer_dead_lettered',
    });
    expect(results.ok && results.value.items.map((i) => i.receiptId)).toEqual(['run-000001', 'run-000002']);
    expect([...(await replayCounts('run-')).values()].every((n) => n === 1)).toBe(true);
    const bulk = await pool.query(
      `select operation_id, actor_login from keel.settlement_replay where bulk_job = $1 order by receipt_id limit 1`,
      [preview.jobId],
    );
    expect(bulk.rows[0]).toEqual({ operation_id: `${preview.jobId}:run-000000`, actor_login: 'admin' });
    const audited = await pool.query(
      `select count(*)::int as n from keel.audit_event where action = 'settlement.replay' and operation_id like $1`,
      [`${preview.jobId}:%`],
    );
    expect(audited.rows[0].n).toBe(37); // 36 by the job, 1 by the single replay under the item's id
    // Paging through every item by keyset returns each once.
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await bulkReplayItems(deps, viewer, { jobId: preview.jobId, after, limit: 15 });
      if (!page.ok) throw new Error(page.error.code);
      seen.push(...page.value.items.map((i) => i.receiptId));
      if (!page.value.nextAfter) break;
      after = page.value.nextAfter;
    }
    expect(new Set(seen).size).toBe(40);
  });

  it('a bulk replay and concurrent single replays of the same receipts replay each once', async () => {
    await deadLetters('race-', 400);
    const preview = await started({ receiptIdPrefix: 'race-' });
    const singles = { unitOfWork: postgresSettlementUnitOfWork(createDatabase(newPool(4))) };
    const [batches, single] = await Promise.all([
      runBulkReplayBatches({ unitOfWork: postgresSettlementUnitOfWork(createDatabase(newPool(2))) }, { batchSize: 25 }),
      Promise.all(
        Array.from({ length: 100 }, (_, i) => {
          const receiptId = `race-${String(i * 4).padStart(6, '0')}`;
          return replayDeadLetter(singles, support, { receiptId, note: 'n', operationId: `race-single-${i}` });
        }),
      ),
    ]);
    expect(batches).toBe(16);
    const counts = await replayCounts('race-');
    expect(counts.size).toBe(400);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    const singleWins = single.filter((r) => r.ok).length;
    expect(single.filter((r) => !r.ok).every((r) => !r.ok && r.error.code === 'CONFLICT')).toBe(true);
    const { counts: results } = await progress(preview.jobId);
    expect(results).toMatchObject({ replayed: 400 - singleWins, no_longer_dead_lettered: singleWins, pending: 0 });
  });

  it('resumes after its worker is killed mid-job and replays every item exactly once', async () => {
    await deadLetters('kill-', 4_000);
    const preview = await started({ receiptIdPrefix: 'kill-' });
    const child = spawnWorker(url, 40);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    for (let tries = 0; (await progress(preview.jobId)).job.processedCount < 400; tries += 1) {
      if (tries > 1_500) throw new Error('the child worker made no progress');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    child.kill('SIGKILL');
    await exited;
    const atKill = (await progress(preview.jobId)).job;
    expect(atKill.status).toBe('RUNNING');
    expect(atKill.processedCount).toBeLessThan(atKill.itemCount);
    console.info(`[measure] worker killed after ${atKill.processedCount} of ${atKill.itemCount} items`);

    // The killed worker's lease still holds the job: no other instance takes it yet.
    const held = await pool.query(`select worker_instance from keel.bulk_replay where id = $1`, [preview.jobId]);
    expect(held.rows[0].worker_instance).toBe(`child-${child.pid}`);
    expect(await runBulkReplayBatches(deps, { batchSize: 100 })).toBe(0);
    // Its lease runs out (set in the past rather than waited for); three workers of one
    // instance resume together, row locks keeping each batch to one of them.
    await pool.query(
      `update keel.bulk_replay set worker_lease_until = clock_timestamp() - interval '1 ms' where id = $1`,
      [preview.jobId],
    );
    const logged: { message: string; fields?: Record<string, unknown> }[] = [];
    const resumedAt = performance.now();
    await Promise.all(
      [0, 1, 2].map(() =>
        runBulkReplayBatches(
          { unitOfWork: postgresSettlementUnitOfWork(createDatabase(newPool(2))) },
          {
            batchSize: 100,
            worker: { instance: 'survivor', leaseMs: 30_000 },
            log: (_level, message, fields) => logged.push({ message, fields }),
          },
        ),
      ),
    );
    expect(logged.filter((l) => l.message.startsWith('bulk replay job taken over'))).toEqual([
      { message: expect.stringContaining('taken over'), fields: { job: preview.jobId, from: `child-${child.pid}` } },
    ]);
    expect(
      (await pool.query(`select worker_instance from keel.bulk_replay where id = $1`, [preview.jobId])).rows[0]
        .worker_instance,
    ).toBe('survivor');
    console.info(
      `[measure] resumed bulk replay of ${atKill.itemCount - atKill.processedCount} items: ` +
        `${(performance.now() - resumedAt).toFixed(0)} ms`,
    );
    const { job, counts } = await progress(preview.jobId);
    expect(job).toMatchObject({ status: 'COMPLETED', processedCount: 4_000 });
    expect(counts).toMatchObject({ replayed: 4_000, pending: 0 });
    const replays = await replayCounts('kill-');
    expect(replays.size).toBe(4_000);
    expect([...replays.values()].every((n) => n === 1)).toBe(true);
    const queued = await pool.query(
      `select count(*)::int as n from settle.attempts where starts_with(receipt_id, 'kill-') and attempts = 0`,
    );
    expect(queued.rows[0].n).toBe(4_000);
    const events = await pool.query(
      `select count(*)::int as n from keel.settlement_event where kind = 'replayed'
       and starts_with(receipt_id, 'kill-')`,
    );
    expect(events.rows[0].n).toBe(4_000);
  }, 120_000);
});

function spawnWorker(databaseUrl: string, batchSize: number) {
  const client = new URL('../../lib/db/client.ts', import.meta.url).href;
  const adapter = new URL('../../lib/adapters/settlement-replay.ts', import.meta.url).href;
  const worker = new URL('../../lib/workers/bulk-replay-worker.ts', import.meta.url).href;
  const code = `
    const { createDatabase, createPool } = await import(${JSON.stringify(client)});
    const { postgresSettlementUnitOfWork } = await import(${JSON.stringify(adapter)});
    const { startBulkReplayWorker } = await import(${JSON.stringify(worker)});
    const unitOfWork = postgresSettlementUnitOfWork(createDatabase(createPool(process.env.KEEL_WORKER_DB, 2)));
    startBulkReplayWorker({ unitOfWork, log: () => {}, batchSize: ${batchSize}, idleMs: 20,
      worker: { instance: 'child-' + process.pid, leaseMs: 60_000 } });
    setInterval(() => {}, 60_000);`;
  return spawn(process.execPath, ['--import', 'tsx', '--conditions=react-server', '--input-type=module', '-e', code], {
    env: { ...process.env, KEEL_WORKER_DB: databaseUrl },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

describe('a bulk job across instances', () => {
  it('stays with the instance working it while its lease holds, then passes to another', async () => {
    await deadLetters('lease-', 30);
    const preview = await started({ receiptIdPrefix: 'lease-' });
    const a = { instance: 'keel-a', leaseMs: 60_000 };
    const b = { instance: 'keel-b', leaseMs: 60_000 };
    const onA = { unitOfWork: postgresSettlementUnitOfWork(createDatabase(newPool(2))) };
    const onB = { unitOfWork: postgresSettlementUnitOfWork(createDatabase(newPool(2))) };
    expect(await runBulkReplayBatches(onA, { batchSize: 10, maxBatches: 1, worker: a })).toBe(1);
    // B finds no job it may take while A's lease holds, however often it looks.
    for (let i = 0; i < 5; i += 1) expect(await runBulkReplayBatches(onB, { batchSize: 10, worker: b })).toBe(0);
    expect((await progress(preview.jobId)).job).toMatchObject({ processedCount: 10, workerInstance: 'keel-a' });
    // A keeps working it: each batch renews its lease.
    expect(await runBulkReplayBatches(onA, { batchSize: 10, maxBatches: 1, worker: a })).toBe(1);
    await pool.query(
      `update keel.bulk_replay set worker_lease_until = clock_timestamp() - interval '1 ms' where id = $1`,
      [preview.jobId],
    );
    const logged: unknown[] = [];
    expect(
      await runBulkReplayBatches(onB, {
        batchSize: 10,
        worker: b,
        log: (_level, message, fields) => logged.push({ message, fields }),
      }),
    ).toBe(1);
    expect(logged).toContainEqual({
      message: expect.stringContaining('taken over'),
      fields: { job: preview.jobId, from: 'keel-a' },
    });
    expect((await progress(preview.jobId)).job).toMatchObject({
      status: 'COMPLETED',
      processedCount: 30,
      workerInstance: 'keel-b',
    });
    expect([...(await replayCounts('lease-')).values()].every((n) => n === 1)).toBe(true);
    // A, back, finds nothing left to do.
    expect(await runBulkReplayBatches(onA, { batchSize: 10, worker: a })).toBe(0);
  });
});

describe('cancelling a bulk replay', () => {
  it('stops between batches; results so far stay and the rest end as cancelled', async () => {
    await deadLetters('cxl-', 3_000);
    const preview = await started({ receiptIdPrefix: 'cxl-' });
    const worker = startBulkReplayWorker({
      unitOfWork: postgresSettlementUnitOfWork(createDatabase(newPool(2))),
      log: () => {},
      batchSize: 20,
      idleMs: 10,
    });
    while ((await progress(preview.jobId)).job.processedCount === 0)
      await new Promise((resolve) => setTimeout(resolve, 10));
    const cancelled = await cancelBulkReplay(deps, support, { jobId: preview.jobId, note: 'wrong filter' });
    await worker.stop();
    expect(cancelled).toMatchObject({ ok: true, value: { job: { status: 'CANCELLED' } } });
    const { job, counts } = await progress(preview.jobId);
    expect(counts.replayed).toBe(job.processedCount);
    expect(counts.replayed % 20).toBe(0); // whole batches only
    expect(counts.replayed + counts.cancelled).toBe(3_000);
    expect(counts.cancelled).toBeGreaterThan(0);
    expect((await replayCounts('cxl-')).size).toBe(counts.replayed);
    expect(
      (await pool.query(`select count(*)::int as n from settle.dead_letters where starts_with(receipt_id, 'cxl-')`))
        .rows[0].n,
    ).toBe(counts.cancelled);

    expect(await runBulkReplayBatches(deps)).toBe(0);
    expect(await cancelBulkReplay(deps, support, { jobId: preview.jobId })).toEqual({
      ok: true,
      value: { job, counts },
    });
    expect(await startBulkReplay(deps, support, { jobId: preview.jobId })).toMatchObject({
      ok: false,
      error: { code: 'CONFLICT' },
    });
  });

  it('refuses to cancel a completed job or an unknown one', async () => {
    await deadLetters('done-', 3);
    const preview = await started({ receiptIdPrefix: 'done-' });
    await runBulkReplayBatches(deps);
    expect(await cancelBulkReplay(deps, support, { jobId: preview.jobId })).toMatchObject({
      ok: false,
      error: { code: 'CONFLICT' },
    });
    expect(await cancelBulkReplay(deps, support, { jobId: 999_999 })).toMatchObject({
      ok: false,
      error: { code: 'NOT_FOUND' },
    });
    expect(await cancelBulkReplay(deps, viewer, { jobId: preview.jobId })).toMatchObject({
      ok: false,
      error: { code: 'FORBIDDEN' },
    });
  });
});

describe('a bulk job whose starter loses the permission', () => {
  const users = { unitOfWork: postgresUserUnitOfWork(db) };
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  /** A user of the test's own, so disabling or demoting them touches no other test's job. */
  async function starterUser(login: string, role: Role = 'support'): Promise<Actor> {
    const actor: Actor = { id: `u-${login}`, login, name: login, role };
    await insertKeelUsers(pool, [actor]);
    return actor;
  }

  async function startedBy(starter: Actor, receiptIdPrefix: string, action: 'REPLAY' | 'DISCARD' = 'REPLAY') {
    const preview = await previewBulkReplay(deps, support, {
      filter: { receiptIdPrefix },
      note: 'ledger outage of the 3rd',
      action,
    });
    if (!preview.ok) throw new Error(preview.error.code);
    expect(await startBulkReplay(deps, starter, { jobId: preview.value.jobId })).toMatchObject({
      ok: true,
      value: { status: 'RUNNING', startedBy: { login: starter.login } },
    });
    return preview.value;
  }

  const cancelEvents = async (jobId: number) =>
    (
      await pool.query(
        `select actor_id, actor_login, actor_role, outcome, reason, request_id, before, after from keel.audit_event
         where action = 'settlement.bulk_replay.cancel' and target_kind = 'bulk_replay' and target_id = $1 order by id`,
        [String(jobId)],
      )
    ).rows;

  const jobEvents = async (jobId: number, action: string) =>
    (
      await pool.query(`select count(*)::int as n from keel.audit_event where action = $1 and request_id = $2`, [
        action,
        `bulk-replay-job-${jobId}`,
      ])
    ).rows[0].n;

  const deadLettersLeft = async (prefix: string) =>
    (await pool.query(`select count(*)::int as n from settle.dead_letters where starts_with(receipt_id, $1)`, [prefix]))
      .rows[0].n;

  it('is cancelled at its next batch once its starter is disabled: no more replays, cancel audited once', async () => {
    await deadLetters('ban-', 30);
    const starter = await starterUser('sally');
    const preview = await startedBy(starter, 'ban-');
    expect(await runBulkReplayBatches(deps, { batchSize: 10, maxBatches: 1 })).toBe(1);
    expect(
      await setUserDisabled(users, admin, { username: 'sally', disabled: true, reason: 'left the team' }),
    ).toMatchObject({ ok: true, value: { changed: true } });

    const logged: unknown[] = [];
    expect(
      await runBulkReplayBatches(deps, {
        batchSize: 10,
        log: (level, message, fields) => logged.push({ level, message, fields }),
      }),
    ).toBe(1);
    expect(logged).toContainEqual({
      level: 'warn',
      message: expect.stringContaining('starter'),
      fields: { job: preview.jobId, cause: 'STARTER_DISABLED' },
    });
    const { job, counts } = await progress(preview.jobId);
    expect(job).toMatchObject({ status: 'CANCELLED', processedCount: 10 });
    expect(counts).toMatchObject({ replayed: 10, cancelled: 20, pending: 0 });
    expect((await replayCounts('ban-')).size).toBe(10);
    expect(await deadLettersLeft('ban-')).toBe(20);
    expect(await jobEvents(preview.jobId, 'settlement.replay')).toBe(10);
    expect(await cancelEvents(preview.jobId)).toEqual([
      {
        actor_id: 'keel:housekeeping',
        actor_login: 'keel',
        actor_role: 'viewer',
        outcome: 'APPLIED',
        reason:
          "Cancelled by Keel: the job's starter, sally, lost the permission to replay dead-lettered settlements " +
          '(the account was disabled).',
        request_id: `bulk-replay-job-${preview.jobId}`,
        before: { status: 'RUNNING', processedCount: 10 },
        after: { status: 'CANCELLED', cancelledItems: 20, cause: 'STARTER_DISABLED', starter: 'sally' },
      },
    ]);

    // Cancelled once: no worker takes the job again, and a user's cancel after it finds it cancelled.
    expect(await runBulkReplayBatches(deps)).toBe(0);
    expect(await cancelBulkReplay(deps, admin, { jobId: preview.jobId })).toMatchObject({
      ok: true,
      value: { job: { status: 'CANCELLED' } },
    });
    expect(await cancelEvents(preview.jobId)).toHaveLength(1);
    expect((await replayCounts('ban-')).size).toBe(10);
  });

  it('is cancelled at its next batch once its starter loses the permission, and discards nothing more', async () => {
    await deadLetters('demote-', 30);
    const starter = await starterUser('dmitri');
    const preview = await startedBy(starter, 'demote-', 'DISCARD');
    expect(await runBulkReplayBatches(deps, { batchSize: 10, maxBatches: 1 })).toBe(1);
    expect(
      await changeUserRole(users, admin, { username: 'dmitri', role: 'operator', expectedRole: 'support' }),
    ).toMatchObject({ ok: true, value: { changed: true } });

    expect(await runBulkReplayBatches(deps, { batchSize: 10 })).toBe(1);
    const { job, counts } = await progress(preview.jobId);
    expect(job).toMatchObject({ status: 'CANCELLED', processedCount: 10 });
    expect(counts).toMatchObject({ discarded: 10, cancelled: 20, pending: 0 });
    expect(await deadLettersLeft('demote-')).toBe(20);
    expect(await jobEvents(preview.jobId, 'settlement.discard')).toBe(10);
    expect(await cancelEvents(preview.jobId)).toEqual([
      expect.objectContaining({
        actor_login: 'keel',
        reason:
          "Cancelled by Keel: the job's starter, dmitri, lost the permission to discard dead-lettered settlements " +
          '(their role no longer has it).',
        after: { status: 'CANCELLED', cancelledItems: 20, cause: 'STARTER_ROLE_LACKS_PERMISSION', starter: 'dmitri' },
      }),
    ]);
    expect(await runBulkReplayBatches(deps)).toBe(0);
    expect(await cancelEvents(preview.jobId)).toHaveLength(1);
  });

  it('keeps working for a starter who still may: a role change between roles with the permission', async () => {
    await deadLetters('keep-', 30);
    const starter = await starterUser('petra');
    const preview = await startedBy(starter, 'keep-');
    expect(await runBulkReplayBatches(deps, { batchSize: 10, maxBatches: 1 })).toBe(1);
    expect(
      await changeUserRole(users, admin, { username: 'petra', role: 'admin', expectedRole: 'support' }),
    ).toMatchObject({ ok: true, value: { changed: true } });
    expect(await runBulkReplayBatches(deps, { batchSize: 10 })).toBe(2);
    expect((await progress(preview.jobId)).job).toMatchObject({ status: 'COMPLETED', processedCount: 30 });
    expect((await replayCounts('keep-')).size).toBe(30);
    expect(await cancelEvents(preview.jobId)).toEqual([]);
  });

  it('once a disable commits while a worker runs the job, no further batch of it commits', async () => {
    await deadLetters('live-', 3_000);
    const starter = await starterUser('lena');
    const preview = await startedBy(starter, 'live-');
    const worker = startBulkReplayWorker({
      unitOfWork: postgresSettlementUnitOfWork(createDatabase(newPool(2))),
      log: () => {},
      batchSize: 20,
      idleMs: 10,
    });
    while ((await progress(preview.jobId)).job.processedCount === 0) await sleep(10);
    expect(await setUserDisabled(users, admin, { username: 'lena', disabled: true })).toMatchObject({
      ok: true,
      value: { changed: true },
    });
    // The disable waited for any batch holding the starter's row; every later batch sees it.
    const atDisable = (await progress(preview.jobId)).job.processedCount;
    while ((await progress(preview.jobId)).job.status === 'RUNNING') await sleep(10);
    await worker.stop();
    const { job, counts } = await progress(preview.jobId);
    expect(job).toMatchObject({ status: 'CANCELLED', processedCount: atDisable });
    expect(atDisable).toBeLessThan(3_000);
    expect(counts).toMatchObject({ replayed: atDisable, cancelled: 3_000 - atDisable, pending: 0 });
    expect((await replayCounts('live-')).size).toBe(atDisable);
    expect(await cancelEvents(preview.jobId)).toHaveLength(1);
  });
});
