// The worker side of bench/settlement-throughput.ts: one forked process per worker,
// driven by messages from the orchestrator (ready -> go -> done/stop).
import { access, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { Logger, run, type Runner } from 'graphile-worker';
import PgBoss from 'pg-boss';
import type { postgresSettlementStore as StoreFactory } from '../lib/simulator/adapters/settlement-store';
import type { createDatabase as DatabaseFactory, createPool as PoolFactory } from '../lib/db/client';
import type { RetryPolicy, SettlementOutcome } from '../lib/domain/settlement';

export type WorkerReport = {
  settled: number;
  statements: number;
  conflicts: number;
  /** CPU microseconds over the drain: this process, and its PostgreSQL backend (null when /proc is not readable). */
  workerCpuUs: number;
  backendCpuUs: number | null;
};
type ToParent = { type: 'ready' } | { type: 'done'; report: WorkerReport };
type FromParent = { type: 'go' } | { type: 'stop' };

const send = (message: ToParent) => process.send?.(message);

/** utime + stime of a local process from /proc (clock ticks of 10 ms), or null. */
async function processCpuUs(pid: number): Promise<number | null> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return null;
  }
}
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
 *
 * With `rttMs` above 0, each query waits that long before it is sent: the round trip of a
 * database on another host, which this machine's loopback cannot add (no netem). The
 * server holds nothing of the statement's while it waits, as on a network.
 */
function countStatements(rttMs = 0, driver: typeof pg = pg): () => number {
  let statements = 0;
  const original = driver.Client.prototype.query as (...a: unknown[]) => unknown;
  driver.Client.prototype.query = function patched(this: pg.Client, ...args: unknown[]) {
    statements += 1;
    if (rttMs <= 0) return original.apply(this, args);
    return new Promise((resolve) => setTimeout(resolve, rttMs)).then(() => original.apply(this, args));
  } as typeof pg.Client.prototype.query;
  return () => statements;
}

/** Percent of the items retried and dead-lettered; the rest are accepted. */
export type Mix = { retried: number; dead: number };

/** Item n's outcome, the same in every system: by n modulo 100, dead-lettered first, then retried. */
export function outcomeOf(n: number, mix: Mix): 'accepted' | 'retried' | 'dead' {
  const bucket = n % 100;
  if (bucket < mix.dead) return 'dead';
  if (bucket < mix.dead + mix.retried) return 'retried';
  return 'accepted';
}

const OUTCOMES: Record<ReturnType<typeof outcomeOf>, SettlementOutcome> = {
  accepted: { kind: 'Accepted' },
  retried: { kind: 'Retryable', code: 'rpc' },
  dead: { kind: 'Permanent', code: 'invalid_observation' },
};

/** The loaded receipts are `rcpt_` and the item number. */
const itemNumber = (receiptId: string) => Number(receiptId.slice(5));

/** Where the settlement store has lived in Keel's tree, newest first. */
const STORE_MODULES = ['lib/simulator/adapters/settlement-store.ts', 'lib/adapters/settlement-store.ts'];

/**
 * The settlement store and the pool it runs on: this checkout's, or with `checkout` an
 * earlier build's (a checkout with its own node_modules), imported from there so that its
 * code, drizzle and pg run as that build shipped them.
 */
async function keelModules(checkout: string | null): Promise<{
  postgresSettlementStore: typeof StoreFactory;
  createDatabase: typeof DatabaseFactory;
  createPool: typeof PoolFactory;
  driver: typeof pg;
}> {
  if (!checkout) {
    const [{ postgresSettlementStore }, { createDatabase, createPool }] = await Promise.all([
      import('../lib/simulator/adapters/settlement-store'),
      import('../lib/db/client'),
    ]);
    return { postgresSettlementStore, createDatabase, createPool, driver: pg };
  }
  const exists = (path: string) =>
    access(path).then(
      () => true,
      () => false,
    );
  const found = await Promise.all(STORE_MODULES.map((module) => exists(join(checkout, module))));
  const store = STORE_MODULES[found.indexOf(true)];
  if (!store) throw new Error(`no settlement store under ${checkout}`);
  const [{ postgresSettlementStore }, { createDatabase, createPool }] = await Promise.all([
    import(pathToFileURL(join(checkout, store)).href),
    import(pathToFileURL(join(checkout, 'lib/db/client.ts')).href),
  ]);
  // That build's own driver, whose queries are the ones to count (and delay, with --rtt-ms).
  const driver = createRequire(join(checkout, 'package.json'))('pg') as typeof pg;
  return { postgresSettlementStore, createDatabase, createPool, driver };
}

/** Keel: claim a batch, record each outcome (path `single`, today's) or the batch at once (`batch`). */
async function keelWorker(url: string, workerId: string, batch: number, extra: string): Promise<void> {
  const { path, mix, retryBackoffMs, rttMs, checkout, warmup } = JSON.parse(extra) as {
    path: string;
    mix: Mix;
    retryBackoffMs: number;
    rttMs: number;
    checkout: string | null;
    warmup: boolean;
  };
  const { postgresSettlementStore, createDatabase, createPool, driver } = await keelModules(checkout);
  // A retried item is rescheduled past the drain, so every item is settled exactly once.
  const policy: RetryPolicy = {
    maxRetries: 5,
    initialBackoffMs: retryBackoffMs,
    backoffMultiplier: 2,
    backoffCapMs: Math.max(retryBackoffMs, 60_000),
  };
  const outcome = (receiptId: string) => OUTCOMES[outcomeOf(itemNumber(receiptId), mix)];
  const statements = countStatements(rttMs, driver);
  const pool = createPool(url, 1);
  const db = createDatabase(pool);
  const store = postgresSettlementStore(db);
  const { rows } = await pool.query<{ pid: number }>('select pg_backend_pid() as pid');
  const backendPid = rows[0]!.pid;
  const flushStats = () => pool.query('select pg_stat_force_next_flush()');
  await drainAndReport(statements, backendPid, warmup && flushStats, async () => {
    let settled = 0;
    let conflicts = 0;
    for (;;) {
      const now = Date.now();
      const claimed = await store.claimDue(workerId, now, 60_000, batch);
      if (!claimed.ok) throw new Error(`claim refused: ${claimed.error.kind}`);
      if (claimed.value.length === 0) break;
      if (path === 'batch') {
        const items = claimed.value.map((claim) => ({ claim, outcome: outcome(claim.receiptId) }));
        const recorded = await store.recordClaimedOutcomes(items, policy, Date.now());
        if (!recorded.ok) throw new Error(`batch refused: ${recorded.error.kind}`);
        for (const item of recorded.value) {
          if (item.ok) settled += 1;
          else conflicts += 1;
        }
      } else {
        for (const claim of claimed.value) {
          const routed = await store.recordClaimedOutcome(claim, outcome(claim.receiptId), policy, Date.now());
          if (routed.ok) settled += 1;
          else conflicts += 1;
        }
      }
    }
    return { settled, conflicts };
  });
  await pool.end();
}

/**
 * With `flushStats` (a warm-up), first drains the warm-up items the queue holds, untimed: a
 * worker runs for hours, and a drain of 125 batches per worker would otherwise also time the
 * JIT compiling the worker's code. Its backend's statistics are flushed then, so the drain's
 * trigger calls are counted apart. Then says ready, waits for go, runs `drain` and reports
 * what it settled with the statements it sent and the CPU of this process and of its
 * PostgreSQL backend over it.
 */
async function drainAndReport(
  statements: () => number,
  backendPid: number,
  flushStats: false | (() => Promise<unknown>),
  drain: () => Promise<{ settled: number; conflicts: number }>,
): Promise<void> {
  if (flushStats) {
    await drain();
    await flushStats();
  }
  send({ type: 'ready' });
  await nextMessage('go');
  const before = statements();
  const cpuBefore = process.cpuUsage();
  const backendBefore = await processCpuUs(backendPid);
  const { settled, conflicts } = await drain();
  const cpu = process.cpuUsage(cpuBefore);
  const backendAfter = await processCpuUs(backendPid);
  send({
    type: 'done',
    report: {
      settled,
      statements: statements() - before,
      conflicts,
      workerCpuUs: cpu.user + cpu.system,
      backendCpuUs: backendBefore === null || backendAfter === null ? null : backendAfter - backendBefore,
    },
  });
}

/**
 * pgbench's script for Keel's shape (bench/pgbench/keel-shape.sql) as a node-postgres client
 * runs it: its two statements, each a named prepared statement, the claim's five arrays handed
 * to the record statement as the text the server sent, the outcomes computed in SQL. No
 * parsing, routing or array building of Keel's own: what any Node worker on this driver pays
 * per settlement at least, so Keel's figure against it is Keel's own code, and this one's
 * against pgbench's is the driver and the runtime.
 */
async function nodeFloorWorker(url: string, workerId: string, extra: string): Promise<void> {
  const { nowMs, mix, retryBackoffMs, rttMs, warmup } = JSON.parse(extra) as {
    nowMs: number;
    mix: Mix;
    retryBackoffMs: number;
    rttMs: number;
    warmup: boolean;
  };
  const script = await readFile(new URL('./pgbench/keel-shape.sql', import.meta.url), 'utf8');
  const [claimText, recordText] = script
    .split(/\\gset/)
    .map((part) => part.replace(/^--.*$/gm, '').trim())
    .filter((part) => part.length > 0);
  const values: Record<string, unknown> = {
    now: nowMs,
    client_id: workerId,
    dead: mix.dead,
    retried: mix.retried,
    backoff: retryBackoffMs,
  };
  /** pgbench's `:name` variables as positional parameters, in order of first use. */
  const positional = (text: string) => {
    const names: string[] = [];
    const sql = text.replace(/(?<!:):([a-z_]+)/g, (_, name: string) => {
      if (!names.includes(name)) names.push(name);
      return `$${names.indexOf(name) + 1}`;
    });
    return { sql, names };
  };
  const claim = positional(claimText!);
  const record = positional(recordText!);
  const statements = countStatements(rttMs);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
  const backendPid = rows[0]!.pid;
  const flushStats = () => client.query('select pg_stat_force_next_flush()');
  await drainAndReport(statements, backendPid, warmup && flushStats, async () => {
    let settled = 0;
    for (;;) {
      const claimed = await client.query<Record<string, string>>({
        name: 'floor_claim',
        text: claim.sql,
        values: claim.names.map((name) => values[name]),
      });
      const got = claimed.rows[0]!;
      if (got.ids === '{}') break;
      Object.assign(values, got);
      await client.query({ name: 'floor_record', text: record.sql, values: record.names.map((name) => values[name]) });
      // The claim's ids are a text array; its elements are quoted receipt ids with no comma in them.
      settled += got.ids!.split(',').length;
    }
    return { settled, conflicts: 0 };
  });
  await client.end();
}

interface GraphileOptions {
  concurrentJobs: number;
  localQueueSize: number;
  completeJobBatchDelay: number;
  failJobBatchDelay: number;
  pollInterval?: number;
  mix: Mix;
}

/**
 * graphile-worker 0.17 with its local queue and batched completion, options by their own
 * names (GraphileConfig.WorkerOptions). The task does nothing but throw for a retried or
 * dead-lettered item (the dead ones were added with max_attempts 1).
 */
async function graphileWorker(url: string, extra: string): Promise<void> {
  const options = JSON.parse(extra) as GraphileOptions;
  const failure = new Error('settlement outcome: retry');
  const runner: Runner = await run({
    connectionString: url,
    noHandleSignals: true,
    taskList: {
      settle: async (payload) => {
        if (outcomeOf((payload as { n: number }).n, options.mix) !== 'accepted') throw failure;
      },
    },
    logger: new Logger(() => () => {}),
    preset: {
      worker: {
        concurrentJobs: options.concurrentJobs,
        localQueue: { size: options.localQueueSize },
        completeJobBatchDelay: options.completeJobBatchDelay,
        failJobBatchDelay: options.failJobBatchDelay,
        ...(options.pollInterval === undefined ? {} : { pollInterval: options.pollInterval }),
      },
    },
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
  else if (role === 'node-floor') await nodeFloorWorker(url, workerId, extra);
  else if (role === 'graphile') await graphileWorker(url, extra);
  else if (role === 'pgboss') await pgBossWorker(url, batch);
  else throw new Error(`unknown role ${role}`);
}
