// The worker side of bench/settlement-throughput.ts: one forked process per worker,
// driven by messages from the orchestrator (ready -> go -> done/stop).
import pg from 'pg';
import { Logger, run, type Runner } from 'graphile-worker';
import PgBoss from 'pg-boss';
import { postgresSettlementStore } from '../lib/simulator/adapters/settlement-store';
import { createDatabase, createPool } from '../lib/db/client';
import { DEFAULT_RETRY_POLICY, type SettlementOutcome } from '../lib/domain/settlement';

export type WorkerReport = { settled: number; statements: number; conflicts: number };
type ToParent = { type: 'ready' } | { type: 'done'; report: WorkerReport };
type FromParent = { type: 'go' } | { type: 'stop' };

const send = (message: ToParent) => process.send?.(message);
const nextMessage = (wanted: FromParent['type']) =>
  new Promise<void>((resolve) => {
    const listener = (message: FromParent) => {
      if (message.type !== wanted) return;
      process.off('message', listener);
      resolve();
    };
    process.on('message', listener);
  });

/**
 * Every query a pg client sends in this process is one round trip (node-postgres sends
 * Parse/Bind/Execute/Sync together), BEGIN and COMMIT included: counted client-side
 * because this server has no pg_stat_statements in shared_preload_libraries.
 */
function countStatements(): () => number {
  let statements = 0;
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function patched(this: pg.Client, ...args: unknown[]) {
    statements += 1;
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  return () => statements;
}

const ACCEPTED: SettlementOutcome = { kind: 'Accepted' };

/** Keel: claim a batch, record each outcome (path `single`, today's) or the batch at once (`batch`). */
async function keelWorker(url: string, workerId: string, batch: number, path: string): Promise<void> {
  const statements = countStatements();
  const pool = createPool(url, 1);
  const db = createDatabase(pool);
  const store = postgresSettlementStore(db);
  await pool.query('select 1');
  send({ type: 'ready' });
  await nextMessage('go');
  const before = statements();
  let settled = 0;
  let conflicts = 0;
  for (;;) {
    const now = Date.now();
    const claimed = await store.claimDue(workerId, now, 60_000, batch);
    if (!claimed.ok) throw new Error(`claim refused: ${claimed.error.kind}`);
    if (claimed.value.length === 0) break;
    if (path === 'batch') {
      const items = claimed.value.map((claim) => ({ claim, outcome: ACCEPTED }));
      const recorded = await store.recordClaimedOutcomes(items, DEFAULT_RETRY_POLICY, Date.now());
      if (!recorded.ok) throw new Error(`batch refused: ${recorded.error.kind}`);
      for (const item of recorded.value) {
        if (item.ok) settled += 1;
        else conflicts += 1;
      }
    } else {
      for (const claim of claimed.value) {
        const routed = await store.recordClaimedOutcome(claim, ACCEPTED, DEFAULT_RETRY_POLICY, Date.now());
        if (routed.ok) settled += 1;
        else conflicts += 1;
      }
    }
  }
  send({ type: 'done', report: { settled, statements: statements() - before, conflicts } });
  await pool.end();
}

/** graphile-worker 0.17 with its local queue and batched completion. */
async function graphileWorker(url: string, batch: number, concurrency: number): Promise<void> {
  const runner: Runner = await run({
    connectionString: url,
    concurrency,
    noHandleSignals: true,
    pollInterval: 1_000,
    taskList: { settle: async () => {} },
    logger: new Logger(() => () => {}),
    preset: { worker: { localQueue: { size: batch }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } },
  });
  send({ type: 'ready' });
  await nextMessage('stop');
  await runner.stop();
}

/** pg-boss 10, tuned: batches of `batch`, shortest polling, no maintenance or cron in the workers. */
async function pgBossWorker(url: string, batch: number): Promise<void> {
  const boss = new PgBoss({ connectionString: url, max: 2, supervise: false, schedule: false, migrate: false });
  boss.on('error', () => {});
  await boss.start();
  await boss.work('settle', { batchSize: batch, pollingIntervalSeconds: 0.5 }, async () => {});
  send({ type: 'ready' });
  await nextMessage('stop');
  await boss.stop({ graceful: true, wait: true, close: true });
}

export async function runRole(
  role: string,
  url: string,
  workerId: string,
  batch: number,
  extra: string,
): Promise<void> {
  if (role === 'keel') await keelWorker(url, workerId, batch, extra);
  else if (role === 'graphile') await graphileWorker(url, batch, Number(extra));
  else if (role === 'pgboss') await pgBossWorker(url, batch);
  else throw new Error(`unknown role ${role}`);
}
