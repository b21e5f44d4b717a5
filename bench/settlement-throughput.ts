// Settlement throughput: Keel's settlement store against graphile-worker (local queue +
// batched completion), pgbench running Keel's own statements and, on request, pg-boss
// (tuned) and a pgbench claim-and-delete floor, on one PostgreSQL, interleaved.
// A measurement that prints figures, not a test. Run (about 10 minutes in full):
//   node --import tsx --conditions=react-server bench/settlement-throughput.ts
// Quick mode for development: add `--items 5000 --reps 1`. See docs/performance.md.
//
// The defaults: 50,000 items, 4 worker processes per system, 3 interleaved repetitions; Keel
// claims 100 and records the batch in one call; graphile-worker 0.17.3 runs 4 processes x
// `concurrentJobs` 4, `localQueue.size` 100, `completeJobBatchDelay` 0, `failJobBatchDelay` 0,
// its default `pollInterval` and a no-op task, as the goal's reference measured it. Keel and
// pgbench settle an outcome mix, deterministic per item (item number modulo 100, `--mix`):
// 90% accepted, 8% retried (rescheduled past the drain: `--retry-backoff-ms`), 2% dead-lettered.
// `--graphile-mix 90/8/2` makes graphile-worker's task fail where that mix says too (a
// dead-lettered item is a failure on a job of max_attempts 1, which it keeps as permanently failed).
// WAL is printed twice: the cluster's LSN difference over the drain and the bench database's own
// records read back with pg_waldump. `--split-cores` pins a local PostgreSQL to the first core and
// every client to the others for the run, standing for a database on a host of its own.
import { execFileSync, fork, spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { Logger, runMigrations } from 'graphile-worker';
import PgBoss from 'pg-boss';
import { migrateDatabase } from '../lib/db/migrate';
import { type Mix, outcomeOf, runRole, type WorkerReport } from './settlement-roles';
import { walBytesOfDatabase, type WalDetail } from './wal-by-database';

const { values: args } = parseArgs({
  options: {
    items: { type: 'string', default: '50000' },
    // Items each system drains, untimed, before the timed drain (0: none, the workers start cold).
    'warmup-items': { type: 'string', default: '50000' },
    reps: { type: 'string', default: '3' },
    workers: { type: 'string', default: '4' },
    batch: { type: 'string', default: '100' },
    systems: { type: 'string', default: 'keel,graphile,node-keel,pgbench-keel' },
    // `single`: one statement per outcome (the port's single form); `batch`: recordClaimedOutcomes.
    'keel-path': { type: 'string', default: 'batch' },
    // graphile-worker's own option names (GraphileConfig.WorkerOptions): concurrentJobs,
    // localQueue.size, completeJobBatchDelay, failJobBatchDelay, pollInterval (empty: its default).
    'graphile-concurrency': { type: 'string', default: '4' },
    'graphile-local-queue': { type: 'string', default: '100' },
    'graphile-complete-delay': { type: 'string', default: '0' },
    'graphile-fail-delay': { type: 'string', default: '0' },
    'graphile-poll-interval': { type: 'string', default: '' },
    // accepted/retried/dead-lettered, in percent of the items.
    mix: { type: 'string', default: '90/8/2' },
    // graphile-worker's own: a no-op task (every job succeeds) unless told otherwise.
    'graphile-mix': { type: 'string', default: '100/0/0' },
    'retry-backoff-ms': { type: 'string', default: '3600000' },
    // A pause before each statement of Keel and its two floors (pgbench: `\sleep`), standing
    // for a database on another host; 0 (the default) is this machine's loopback.
    'rtt-ms': { type: 'string', default: '0' },
    // PostgreSQL on the first core and every client (workers, pgbench, this process) on the rest,
    // standing for a database on a host of its own: the clients' CPU is not taken from it.
    'split-cores': { type: 'boolean', default: false },
    // A checkout of an earlier build (with its own node_modules): system `keel-before` runs
    // Keel's workers on that build's settlement store, in the same run as this one's.
    before: { type: 'string' },
    // Prints each drain's WAL per settlement by record kind and relation (pg_waldump).
    'wal-detail': { type: 'boolean', default: false },
    url: { type: 'string', default: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
    role: { type: 'string' },
    'worker-id': { type: 'string', default: 'w' },
    extra: { type: 'string', default: '' },
  },
});

const ITEMS = Number(args.items);
const WARMUP_ITEMS = Number(args['warmup-items']);
const REPS = Number(args.reps);
const WORKERS = Number(args.workers);
const BATCH = Number(args.batch);
const MIX = parseMix(args.mix!);
const RTT_MS = Number(args['rtt-ms']);
const SPLIT_CORES = args['split-cores']!;
const GRAPHILE_MIX = parseMix(args['graphile-mix']!);
const SELF = fileURLToPath(import.meta.url);
const BEFORE = args.before ?? null;
const PGBENCH_DIR = fileURLToPath(new URL('./pgbench/', import.meta.url));

function parseMix(text: string): Mix {
  const [accepted, retried, dead] = text.split('/').map(Number);
  if (![accepted, retried, dead].every((n) => Number.isInteger(n) && n! >= 0) || accepted! + retried! + dead! !== 100)
    throw new Error(`--mix wants accepted/retried/dead-lettered percentages that sum to 100: ${text}`);
  return { retried: retried!, dead: dead! };
}

/** Items of each outcome out of `items` (item n, 1-based, is dead-lettered when n % 100 < dead, and so on). */
function mixCounts(mix: Mix = MIX, items = ITEMS): { accepted: number; retried: number; dead: number } {
  let retried = 0;
  let dead = 0;
  for (let n = 1; n <= items; n += 1) {
    const kind = outcomeOf(n, mix);
    if (kind === 'retried') retried += 1;
    else if (kind === 'dead') dead += 1;
  }
  return { accepted: items - retried - dead, retried, dead };
}

/**
 * The two loads of a drain: the warm-up's items, drained untimed first, and the timed ones.
 * Both are numbered from 1 under a prefix of the same length (every system routes an item by
 * the number after it).
 */
type Phase = { prefix: 'warm_' | 'rcpt_'; items: number };
const WARMUP: Phase = { prefix: 'warm_', items: WARMUP_ITEMS };
const TIMED: Phase = { prefix: 'rcpt_', items: ITEMS };

/** Items of each failing outcome a whole run leaves behind: the warm-up's and the timed drain's. */
function failedAfterBothPhases(mix: Mix): { retried: number; dead: number } {
  const [warm, timed] = [mixCounts(mix, WARMUP.items), mixCounts(mix, TIMED.items)];
  return { retried: warm.retried + timed.retried, dead: warm.dead + timed.dead };
}

function urlFor(database: string): string {
  const url = new URL(args.url!);
  url.pathname = `/${database}`;
  return url.toString();
}

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

const admin = (sql: string) => withClient(args.url!, (c) => c.query(sql));
const walLsn = (client: pg.Client) =>
  client.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn').then((r) => r.rows[0]!.lsn);
/**
 * WAL between two LSNs, both ways: the cluster-wide LSN difference (everything the server
 * wrote, other databases included) and this database's own records with their transactions
 * (pg_waldump; null when the WAL cannot be read here).
 */
async function walBytes(client: pg.Client, from: string, to: string): Promise<{ cluster: number; db: number | null }> {
  const { rows } = await client.query<{ oid: number; dir: string; diff: string }>(
    `select (select oid::int from pg_database where datname = current_database()) as oid,
            current_setting('data_directory') || '/pg_wal' as dir,
            pg_wal_lsn_diff($2::pg_lsn, $1::pg_lsn)::text as diff`,
    [from, to],
  );
  const row = rows[0]!;
  const detail: WalDetail | undefined = args['wal-detail'] ? new Map() : undefined;
  const db = await walBytesOfDatabase(row.dir, row.oid, from, to, detail);
  if (detail) await printWalDetail(client, detail);
  return { cluster: Number(row.diff), db };
}

/** The drain's WAL per settlement by record kind and relation, largest first, relations by name. */
async function printWalDetail(client: pg.Client, detail: WalDetail): Promise<void> {
  const { rows } = await client.query<{ node: string; name: string; db: string }>(
    `select pg_relation_filenode(c.oid)::text as node, n.nspname || '.' || c.relname as name, current_database() as db
     from pg_class c join pg_namespace n on n.oid = c.relnamespace where pg_relation_filenode(c.oid) is not null`,
  );
  const names = new Map(rows.map((r) => [r.node, r.name]));
  console.log(`WAL of ${rows[0]?.db} by record and relation, per settlement (records per settlement):`);
  const entries = [...detail].sort(([, a], [, b]) => b.bytes - a.bytes);
  for (const [key, { bytes, records }] of entries.slice(0, 16)) {
    const [rmgr, record, node] = key.split(' ');
    console.log(
      `  ${fmt(bytes / ITEMS, 1).padStart(7)} B  ${fmt(records / ITEMS, 3).padStart(6)}  ${rmgr} ${record} ` +
        `${node === '-' ? '' : (names.get(node!) ?? node)}`,
    );
  }
}

const walPer = (wal: { cluster: number; db: number | null }, items: number) => ({
  walClusterPerItem: wal.cluster / items,
  walDbPerItem: wal.db === null ? null : wal.db / items,
});

interface Run {
  system: string;
  perSecond: number;
  walClusterPerItem: number;
  walDbPerItem: number | null;
  statementsPerItem?: number;
  /** CPU per settlement (us): the Keel worker processes, and their PostgreSQL backends. */
  workerCpuPerItem?: number;
  backendCpuPerItem?: number | null;
  triggerCallsPerItem?: number;
  conflicts?: number;
  /** graphile-worker: retried jobs that ran again within the drain (their backoff is e^1 s). */
  reruns?: number;
}

interface Child {
  ready: Promise<void>;
  done: Promise<WorkerReport | null>;
  send: (message: { type: 'go' | 'stop' }) => void;
  exited: Promise<void>;
}

function forkWorker(role: string, url: string, workerId: string, extra: string): Child {
  const child = fork(
    SELF,
    ['--role', role, '--url', url, '--worker-id', workerId, '--batch', String(BATCH), '--extra', extra],
    {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  let ready!: () => void;
  let done!: (report: WorkerReport | null) => void;
  const result: Child = {
    ready: new Promise((resolve) => (ready = resolve)),
    done: new Promise((resolve) => (done = resolve)),
    send: (message) => child.send(message),
    exited: new Promise((resolve, reject) =>
      child.on('exit', (code) => {
        done(null);
        if (code === 0) resolve();
        else reject(new Error(`${role} worker exited with ${code}`));
      }),
    ),
  };
  child.on('message', (message: { type: string; report?: WorkerReport }) => {
    if (message.type === 'ready') ready();
    if (message.type === 'done') done(message.report ?? null);
  });
  return result;
}

/** Polls until `query` says the queue is empty; returns when it first does. */
async function waitEmpty(client: pg.Client, query: string): Promise<void> {
  for (;;) {
    const { rows } = await client.query<{ left: boolean }>(query);
    if (!rows[0]!.left) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The node-postgres floor's name in the tables (not led by `keel`, which names Keel's own row). */
const NODE_FLOOR = 'node-postgres Keel own shape';
/** The earlier build's row (not led by `keel` either). */
const BEFORE_SYSTEM = `earlier build's Keel (${args['keel-path']})`;

let keelTemplate: string | null = null;

async function keelDatabase(name: string): Promise<string> {
  if (!keelTemplate) {
    keelTemplate = `keel_bench_template_${process.pid}`;
    await admin(`create database ${keelTemplate}`);
    const pool = new pg.Pool({ connectionString: urlFor(keelTemplate), max: 2 });
    const migrated = await migrateDatabase(pool);
    await pool.end();
    if (!migrated.ok) throw new Error(migrated.error.message);
  }
  await admin(`create database ${name} template ${keelTemplate}`);
  // Counts trigger function calls (pg_stat_user_functions) for the per-settlement figures.
  await admin(`alter database ${name} set track_functions = 'pl'`);
  return urlFor(name);
}

async function loadKeelAttempts(client: pg.Client, nowMs: number, phase: Phase = TIMED): Promise<void> {
  await client.query(
    `insert into settle.attempts (receipt_id, finalized_at, work_kind, attempts, next_visible_at_ms, row_version,
     updated_at_ms)
     select $3::text || lpad(n::text, 8, '0'), $1::bigint - 5000, 'pending_observation', 0,
     $1::bigint - 1000 - (n % 997), 0, $1::bigint - 1000
     from generate_series(1, $2::int) as n`,
    [nowMs, phase.items, phase.prefix],
  );
  await client.query('vacuum analyze settle.attempts, settle.receipt_place, keel.settlement_event');
}

/**
 * Calls of the settle.* trigger functions in this database
 * (track_functions = pl); a worker's count is flushed when it disconnects.
 */
async function triggerCalls(client: pg.Client): Promise<number> {
  await client.query('select pg_stat_clear_snapshot()');
  const { rows } = await client.query<{ calls: string }>(
    `select coalesce(sum(calls), 0)::text as calls from pg_stat_user_functions where schemaname = 'settle'`,
  );
  return Number(rows[0]!.calls);
}

/**
 * Keel's own workers (role `keel`) or the node-postgres floor running pgbench's script
 * (role `node-floor`), on a loaded Keel database: forked, started together, drained.
 */
async function runKeel(url: string, role: 'keel' | 'keel-before' | 'node-floor' = 'keel'): Promise<Run> {
  return withClient(url, async (client) => {
    const nowMs = Date.now();
    const warmup = WARMUP.items > 0;
    if (warmup) await loadKeelAttempts(client, nowMs, WARMUP);
    const extra = JSON.stringify({
      path: args['keel-path'],
      mix: MIX,
      retryBackoffMs: Number(args['retry-backoff-ms']),
      nowMs,
      rttMs: RTT_MS,
      checkout: role === 'keel-before' ? BEFORE : null,
      warmup,
    });
    const workerRole = role === 'keel-before' ? 'keel' : role;
    const children = Array.from({ length: WORKERS }, (_, i) =>
      forkWorker(workerRole, url, `bench-worker-${i + 1}`, extra),
    );
    // Ready once each worker has drained the warm-up; the timed items are loaded after.
    await Promise.all(children.map((c) => c.ready));
    await loadKeelAttempts(client, nowMs);
    // The load's own trigger calls are flushed and counted here, so only the drain's are reported.
    await client.query('select pg_stat_force_next_flush()');
    const callsBefore = await triggerCalls(client);
    const lsn = await walLsn(client);
    const started = performance.now();
    for (const c of children) c.send({ type: 'go' });
    const reports = await Promise.all(children.map((c) => c.done));
    const elapsed = (performance.now() - started) / 1000;
    const wal = await walBytes(client, lsn, await walLsn(client));
    await Promise.all(children.map((c) => c.exited));
    const settled = reports.reduce((sum, r) => sum + (r?.settled ?? 0), 0);
    const statements = reports.reduce((sum, r) => sum + (r?.statements ?? 0), 0);
    const system =
      role === 'keel' ? `keel (${args['keel-path']})` : role === 'keel-before' ? BEFORE_SYSTEM : NODE_FLOOR;
    if (settled !== ITEMS) throw new Error(`${system} settled ${settled} of ${ITEMS}`);
    await checkKeelDrain(client, system);
    const calls = (await triggerCalls(client)) - callsBefore;
    return {
      system,
      perSecond: settled / elapsed,
      ...walPer(wal, settled),
      statementsPerItem: statements / settled,
      triggerCallsPerItem: calls / settled,
      conflicts: reports.reduce((sum, r) => sum + (r?.conflicts ?? 0), 0),
      workerCpuPerItem: reports.reduce((sum, r) => sum + (r?.workerCpuUs ?? 0), 0) / settled,
      backendCpuPerItem: reports.some((r) => r?.backendCpuUs === null)
        ? null
        : reports.reduce((sum, r) => sum + (r?.backendCpuUs ?? 0), 0) / settled,
    };
  });
}

/**
 * Starts the workers on an empty queue, lets them drain the warm-up's items, then queues
 * every timed item in one transaction: the clock starts at its commit.
 */
async function runQueue(
  system: string,
  url: string,
  role: string,
  extra: string,
  load: (client: pg.Client, phase: Phase) => Promise<void>,
  emptyQuery: string,
  check: (client: pg.Client) => Promise<Partial<Run>> = async () => ({}),
): Promise<Run> {
  const children = Array.from({ length: WORKERS }, (_, i) => forkWorker(role, url, `w${i}`, extra));
  await Promise.all(children.map((c) => c.ready));
  return withClient(url, async (client) => {
    if (WARMUP.items > 0) {
      await load(client, WARMUP);
      await waitEmpty(client, emptyQuery);
    }
    await load(client, TIMED);
    const lsn = await walLsn(client);
    const started = performance.now();
    await waitEmpty(client, emptyQuery);
    const elapsed = (performance.now() - started) / 1000;
    const wal = await walBytes(client, lsn, await walLsn(client));
    for (const c of children) c.send({ type: 'stop' });
    await Promise.all(children.map((c) => c.exited));
    return { system, perSecond: ITEMS / elapsed, ...walPer(wal, ITEMS), ...(await check(client)) };
  });
}

/**
 * What a Keel drain leaves: every retried item rescheduled once (attempt 1, past the drain),
 * every dead-lettered one moved, nothing else.
 */
async function checkKeelDrain(client: pg.Client, system: string): Promise<void> {
  const want = failedAfterBothPhases(MIX);
  const { rows } = await client.query<{ retried: string; other: string; dead: string }>(
    `select (select count(*) from settle.attempts
             where work_kind = 'retry_scheduled' and attempts = 1)::text as retried,
            (select count(*) from settle.attempts
             where not (work_kind = 'retry_scheduled' and attempts = 1))::text as other,
            (select count(*) from settle.dead_letters)::text as dead`,
  );
  const got = rows[0]!;
  if (Number(got.retried) !== want.retried || Number(got.other) !== 0 || Number(got.dead) !== want.dead)
    throw new Error(`${system} left ${JSON.stringify(got)}, wanted ${JSON.stringify(want)}`);
}

async function runGraphile(url: string): Promise<Run> {
  await runMigrations({ connectionString: url, logger: new Logger(() => () => {}) });
  const extra = JSON.stringify({
    concurrentJobs: Number(args['graphile-concurrency']),
    localQueueSize: Number(args['graphile-local-queue']),
    completeJobBatchDelay: Number(args['graphile-complete-delay']),
    failJobBatchDelay: Number(args['graphile-fail-delay']),
    pollInterval: args['graphile-poll-interval'] ? Number(args['graphile-poll-interval']) : undefined,
    mix: GRAPHILE_MIX,
  });
  return runQueue(
    'graphile-worker',
    url,
    'graphile',
    extra,
    // A dead-lettered item is a job of max_attempts 1: its one failure leaves it permanently failed.
    // So is every warm-up job, so that none of them runs again within the timed drain.
    (client, phase) =>
      client
        .query(
          `select count(*) from graphile_worker.add_jobs(array(
           select row('settle', json_build_object('n', n), null, null,
                      case when $3::boolean or n % 100 < $2::int then 1 end,
                      null, null, null)::graphile_worker.job_spec
           from generate_series(1, $1::int) as n))`,
          [phase.items, GRAPHILE_MIX.dead, phase === WARMUP],
        )
        .then(() => undefined),
    // Drained: every job fetched once (attempts > 0) and none still locked (running or awaiting completion).
    'select exists (select 1 from graphile_worker._private_jobs where attempts = 0 or locked_at is not null) as left',
    async (client) => {
      const failed = failedAfterBothPhases(GRAPHILE_MIX);
      const wanted = failed.retried + failed.dead;
      const { rows } = await client.query<{ failed: string; rerun: string }>(
        `select count(*)::text as failed, count(*) filter (where attempts > 1)::text as rerun
         from graphile_worker._private_jobs`,
      );
      if (Number(rows[0]!.failed) !== wanted)
        throw new Error(`graphile-worker kept ${rows[0]!.failed} failed jobs, wanted ${wanted}`);
      return { reruns: Number(rows[0]!.rerun) };
    },
  );
}

async function runPgBoss(url: string): Promise<Run> {
  const boss = new PgBoss({ connectionString: url, max: 2, supervise: false, schedule: false });
  boss.on('error', () => {});
  await boss.start();
  await boss.createQueue('settle');
  await boss.stop({ graceful: false, wait: true, close: true });
  return runQueue(
    'pg-boss',
    url,
    'pgboss',
    '',
    (client, phase) =>
      client
        .query(
          `insert into pgboss.job (name, data) select 'settle', json_build_object('n', n)::jsonb
           from generate_series(1, $1::int) as n`,
          [phase.items],
        )
        .then(() => undefined),
    `select exists (select 1 from pgboss.job where name = 'settle' and state < 'completed') as left`,
  );
}

/**
 * The pgbench script of Keel's statements: keel-shape.sql, or with `--rtt-ms` a copy with a
 * `\sleep` before each of its two statements.
 */
async function keelShapeScript(): Promise<string> {
  const file = `${PGBENCH_DIR}keel-shape.sql`;
  if (RTT_MS <= 0) return file;
  const pause = `\\sleep ${Math.round(RTT_MS * 1000)} us\n`;
  const [claim, record] = (await readFile(file, 'utf8')).split(/(?<=\\gset)\n/);
  if (record === undefined) throw new Error('keel-shape.sql is not a claim then a record');
  const paused = join(tmpdir(), `keel-shape-${process.pid}.sql`);
  await writeFile(paused, `${pause}${claim}\n${pause}${record}`);
  process.once('exit', () => rmSync(paused, { force: true }));
  return paused;
}

function pgbenchBinary(): string {
  return process.env.PGBENCH ?? '/usr/lib/postgresql/15/bin/pgbench';
}

/**
 * pgbench draining the queue `prepare` loads: the warm-up's items untimed, then the timed ones
 * (pgbench compiles nothing at run time; the warm-up leaves its database as the others' leave theirs).
 */
async function runPgbench(
  system: string,
  url: string,
  script: string,
  prepare: (client: pg.Client, nowMs: number, phase: Phase) => Promise<void>,
  check: (client: pg.Client) => Promise<void>,
): Promise<Run> {
  return withClient(url, async (client) => {
    const nowMs = Date.now();
    if (WARMUP.items > 0) {
      await prepare(client, nowMs, WARMUP);
      await drainWithPgbench(url, script, nowMs, WARMUP.items);
    }
    await prepare(client, nowMs, TIMED);
    const lsn = await walLsn(client);
    const started = performance.now();
    await drainWithPgbench(url, script, nowMs, ITEMS);
    const elapsed = (performance.now() - started) / 1000;
    const wal = await walBytes(client, lsn, await walLsn(client));
    await check(client);
    return { system, perSecond: ITEMS / elapsed, ...walPer(wal, ITEMS) };
  });
}

/** Runs `script` in WORKERS pgbench clients until `items` are drained (each transaction takes BATCH). */
async function drainWithPgbench(url: string, script: string, nowMs: number, items: number): Promise<void> {
  // A few extra transactions per client find the queue empty.
  const perClient = Math.ceil(items / BATCH / WORKERS) + 5;
  await new Promise<void>((resolve, reject) => {
    const child = spawn(
      pgbenchBinary(),
      [
        '-n',
        '-M',
        'prepared',
        '-c',
        String(WORKERS),
        '-j',
        String(WORKERS),
        '-t',
        String(perClient),
        '-D',
        `now=${nowMs}`,
        '-D',
        `dead=${MIX.dead}`,
        '-D',
        `retried=${MIX.retried}`,
        '-D',
        `backoff=${args['retry-backoff-ms']}`,
        '-f',
        script,
        url,
      ],
      {
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    );
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`pgbench exited with ${code}`))));
  });
}

const SYSTEMS: Record<string, (db: string) => Promise<Run>> = {
  keel: async (db) => runKeel(await keelDatabase(db)),
  'keel-before': async (db) => runKeel(await keelDatabase(db), 'keel-before'),
  graphile: async (db) => {
    await admin(`create database ${db}`);
    return runGraphile(urlFor(db));
  },
  pgboss: async (db) => {
    await admin(`create database ${db}`);
    return runPgBoss(urlFor(db));
  },
  'pgbench-delete': async (db) => {
    await admin(`create database ${db}`);
    return runPgbench(
      'pgbench claim-100-and-delete',
      urlFor(db),
      `${PGBENCH_DIR}claim-delete.sql`,
      async (client, _nowMs, phase) => {
        await client.query(
          `create table if not exists bench_queue
           (id bigint primary key, run_at bigint not null, payload jsonb not null)`,
        );
        await client.query(
          `insert into bench_queue select n, 0, json_build_object('n', n) from generate_series(1, $1::int) as n`,
          [phase.items],
        );
        await client.query('vacuum analyze bench_queue');
      },
      async (client) => {
        const { rows } = await client.query<{ left: string }>('select count(*)::text as left from bench_queue');
        if (Number(rows[0]!.left) !== 0) throw new Error(`pgbench claim-and-delete left ${rows[0]!.left} rows`);
      },
    );
  },
  'node-keel': async (db) => runKeel(await keelDatabase(db), 'node-floor'),
  'pgbench-keel': async (db) =>
    runPgbench('pgbench Keel own shape', await keelDatabase(db), await keelShapeScript(), loadKeelAttempts, (client) =>
      checkKeelDrain(client, 'pgbench Keel own shape'),
    ),
};

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

const walText = (n: number | null) => (n === null ? 'n/a' : fmt(n));

/** A process and the processes it started (none when pgrep finds none). */
function withChildren(pid: number): number[] {
  try {
    const children = execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
      .trim()
      .split('\n');
    return [pid, ...children.map(Number)];
  } catch {
    return [pid];
  }
}

/** The PostgreSQL server's processes: the postmaster (a backend's parent) and everything it started. */
async function serverPids(): Promise<number[]> {
  // Read while the connection, and so its backend, is open.
  const postmaster = await withClient(args.url!, async (client) => {
    const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
    return Number(readFileSync(`/proc/${rows[0]!.pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
  });
  return withChildren(postmaster);
}

/**
 * `--split-cores`: the server (and the backends it forks from now on) on core 0, this process
 * and the clients it forks on the others; undone at exit. Needs a local server this user may
 * pin (taskset), and at least two cores.
 */
async function splitCores(): Promise<string> {
  const cores = availableParallelism();
  if (cores < 2) throw new Error('--split-cores needs at least two cores');
  const all = `0-${cores - 1}`;
  const clients = cores === 2 ? '1' : `1-${cores - 1}`;
  const pin = (list: string, pid: number): boolean => {
    try {
      execFileSync('taskset', ['-a', '-cp', list, String(pid)], { stdio: 'ignore' });
      return true;
    } catch {
      return false; // a backend that ended in between, or no right to pin
    }
  };
  const server = await serverPids();
  // The postmaster and this process must move: the run would otherwise claim a placement it lacks.
  if (!pin('0', server[0]!) || !pin(clients, process.pid))
    throw new Error('--split-cores could not pin the PostgreSQL server or this process (taskset)');
  for (const pid of server.slice(1)) pin('0', pid);
  // Backends forked since are the postmaster's children too.
  process.once('exit', () => {
    for (const pid of withChildren(server[0]!)) pin(all, pid);
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));
  return `PostgreSQL (pid ${server[0]}) on core 0, the clients on ${clients === '1' ? 'core 1' : `cores ${clients}`}`;
}

async function main() {
  const placement = SPLIT_CORES ? await splitCores() : 'PostgreSQL and the clients sharing every core';
  const systems = args.systems!.split(',');
  if (systems.includes('keel-before') && !BEFORE)
    throw new Error('system keel-before needs --before <checkout of the earlier build>');
  const runs: (Run & { rep: number })[] = [];
  const graphileOptions =
    `concurrentJobs ${args['graphile-concurrency']}, localQueue.size ${args['graphile-local-queue']}, ` +
    `completeJobBatchDelay ${args['graphile-complete-delay']}, failJobBatchDelay ${args['graphile-fail-delay']}, ` +
    `pollInterval ${args['graphile-poll-interval'] || 'default'}, outcome mix ${args['graphile-mix']}`;
  console.log(
    `# ${ITEMS} due items, ${WORKERS} worker processes per system, claim batch ${BATCH}, ${REPS} interleaved ` +
      `repetitions, keel path ${args['keel-path']}, ${RTT_MS} ms before each statement of Keel and its floors; ` +
      `graphile-worker ${graphileOptions}; outcome mix ${args.mix} ` +
      `accepted/retried/dead-lettered (pg-boss and claim-and-delete: all accepted); retry backoff ` +
      `${args['retry-backoff-ms']} ms (graphile-worker: its own, e^1 s); ${placement}; each system first drains ` +
      `${WARMUP_ITEMS} warm-up items, untimed; each repetition starts with the next system`,
  );
  try {
    for (let rep = 1; rep <= REPS; rep += 1) {
      // Each repetition starts one system later, so that no system always runs first (after the
      // previous repetition's last) or last.
      const shift = (rep - 1) % systems.length;
      for (const system of [...systems.slice(shift), ...systems.slice(0, shift)]) {
        const factory = SYSTEMS[system];
        if (!factory) throw new Error(`unknown system ${system}`);
        const db = `keel_bench_${system.replace(/-/g, '_')}_${process.pid}_${rep}`;
        try {
          const run = await factory(db);
          runs.push({ ...run, rep });
          console.log(
            `rep ${rep} ${run.system}: ${fmt(run.perSecond)} settlements/s, WAL/item ${fmt(run.walClusterPerItem)} B ` +
              `cluster LSN diff, ${walText(run.walDbPerItem)} B this database (pg_waldump)` +
              (run.statementsPerItem !== undefined
                ? `, ${fmt(run.statementsPerItem, 3)} statements (= round ` +
                  `trips)/settlement, ${fmt(run.triggerCallsPerItem!, 2)} trigger calls/settlement, ${run.conflicts} ` +
                  `conflicts, CPU/settlement ${fmt(run.workerCpuPerItem!, 1)} us in the workers and ` +
                  `${run.backendCpuPerItem == null ? 'n/a' : fmt(run.backendCpuPerItem, 1)} us in their backends`
                : '') +
              (run.reruns !== undefined ? `, ${run.reruns} retried jobs ran again within the drain` : ''),
          );
        } finally {
          await admin(`drop database if exists ${db} with (force)`);
        }
      }
    }
  } finally {
    if (keelTemplate) await admin(`drop database if exists ${keelTemplate} with (force)`);
  }
  console.log(
    '\n| system | settlements/s (median) | range | WAL B/settlement, cluster LSN diff | WAL B/settlement, ' +
      'this database (pg_waldump) |',
  );
  console.log('|---|---:|---:|---:|---:|');
  const bySystem = new Map<string, (Run & { rep: number })[]>();
  for (const run of runs) bySystem.set(run.system, [...(bySystem.get(run.system) ?? []), run]);
  const medianOf = (system: string, pick: (run: Run) => number | null): number | null => {
    const values = (bySystem.get(system) ?? []).map(pick);
    return values.length === 0 || values.some((v) => v === null) ? null : median(values as number[]);
  };
  for (const [system, list] of bySystem) {
    const rates = list.map((r) => r.perSecond);
    console.log(
      `| ${system} | ${fmt(median(rates))} | ${fmt(Math.min(...rates))}-${fmt(Math.max(...rates))} ` +
        `| ${walText(medianOf(system, (r) => r.walClusterPerItem))} ` +
        `| ${walText(medianOf(system, (r) => r.walDbPerItem))} |`,
    );
  }
  const keel = [...bySystem.keys()].find((s) => s.startsWith('keel'));
  if (!keel) return;
  for (const system of [keel, BEFORE_SYSTEM]) {
    const k = bySystem.get(system);
    if (!k) continue;
    console.log(
      `\n${system}: ${fmt(median(k.map((r) => r.statementsPerItem!)), 3)} statements/settlement and as many round ` +
        `trips (counted client-side: pg_stat_statements is not in shared_preload_libraries), ` +
        `${fmt(median(k.map((r) => r.triggerCallsPerItem!)), 3)} settle.* trigger function calls/settlement ` +
        `(pg_stat_user_functions), CPU/settlement ${fmt(median(k.map((r) => r.workerCpuPerItem!)), 1)} us in the ` +
        `worker processes and ${walText(medianOf(system, (r) => r.backendCpuPerItem ?? null))} us in their backends`,
    );
  }
  /** The ratio of medians, and the ratio within each repetition (the systems ran back to back). */
  const ratioOf = (label: string, ours: string, other: string, pick: (run: Run) => number | null) => {
    const a = medianOf(ours, pick);
    const b = medianOf(other, pick);
    if (a === null || b === null) return;
    const perRep = (bySystem.get(ours) ?? [])
      .map((run) => {
        const their = bySystem.get(other)!.find((r) => r.rep === run.rep);
        const x = pick(run);
        const y = their ? pick(their) : null;
        return x === null || y === null ? 'n/a' : fmt(x / y, 2);
      })
      .join(', ');
    console.log(`${label}: ${fmt(a / b, 2)}x (per repetition ${perRep})`);
  };
  const ratio = (label: string, other: string, pick: (run: Run) => number | null) => ratioOf(label, keel, other, pick);
  ratio('Keel/graphile-worker, settlements/s (goal >= 1.0)', 'graphile-worker', (r) => r.perSecond);
  ratio('Keel/pgbench Keel own shape, settlements/s (goal >= 0.9)', 'pgbench Keel own shape', (r) => r.perSecond);
  ratio('Keel/node-postgres Keel own shape, settlements/s', NODE_FLOOR, (r) => r.perSecond);
  ratio('Keel/node-postgres Keel own shape, worker CPU/settlement', NODE_FLOOR, (r) => r.workerCpuPerItem ?? null);
  ratio('Keel/node-postgres Keel own shape, backend CPU/settlement', NODE_FLOOR, (r) => r.backendCpuPerItem ?? null);
  ratioOf(
    'node-postgres/pgbench Keel own shape, settlements/s',
    NODE_FLOOR,
    'pgbench Keel own shape',
    (r) => r.perSecond,
  );
  ratio('WAL Keel/graphile-worker, cluster LSN diff (goal <= 1.5)', 'graphile-worker', (r) => r.walClusterPerItem);
  ratio('WAL Keel/graphile-worker, this database (pg_waldump) (goal <= 1.5)', 'graphile-worker', (r) => r.walDbPerItem);
  ratio('Keel/earlier build, settlements/s', BEFORE_SYSTEM, (r) => r.perSecond);
  ratio('Keel/earlier build, WAL (pg_waldump)', BEFORE_SYSTEM, (r) => r.walDbPerItem);
  ratio('Keel/earlier build, worker CPU/settlement', BEFORE_SYSTEM, (r) => r.workerCpuPerItem ?? null);
  ratio('Keel/earlier build, backend CPU/settlement', BEFORE_SYSTEM, (r) => r.backendCpuPerItem ?? null);
  ratio('Keel/pg-boss, settlements/s', 'pg-boss', (r) => r.perSecond);
  ratio('Keel/pgbench claim-and-delete, settlements/s', 'pgbench claim-100-and-delete', (r) => r.perSecond);
}

if (args.role) {
  runRole(args.role, args.url!, args['worker-id']!, BATCH, args.extra!).then(
    () => process.exit(0),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
} else {
  main().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}
