// Settlement throughput: Keel's settlement store against graphile-worker (local queue +
// batched completion), pg-boss (tuned) and pgbench, on one PostgreSQL, interleaved.
// A measurement that prints figures, not a test. Run (about 10 minutes in full):
//   node --import tsx --conditions=react-server bench/settlement-throughput.ts
// Quick mode for development: add `--items 5000 --reps 1`. See docs/performance.md.
import { fork, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { Logger, runMigrations } from 'graphile-worker';
import PgBoss from 'pg-boss';
import { migrateDatabase } from '../lib/db/migrate';
import { runRole, type WorkerReport } from './settlement-roles';
import { walBytesOfDatabase } from './wal-by-database';

const { values: args } = parseArgs({
  options: {
    items: { type: 'string', default: '50000' },
    reps: { type: 'string', default: '3' },
    workers: { type: 'string', default: '4' },
    batch: { type: 'string', default: '100' },
    systems: { type: 'string', default: 'keel,graphile,pgboss,pgbench-delete,pgbench-keel' },
    // `single`: one statement per outcome (the port's single form); `batch`: recordClaimedOutcomes.
    'keel-path': { type: 'string', default: 'batch' },
    'graphile-concurrency': { type: 'string', default: '10' },
    url: { type: 'string', default: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
    role: { type: 'string' },
    'worker-id': { type: 'string', default: 'w' },
    extra: { type: 'string', default: '' },
  },
});

const ITEMS = Number(args.items);
const REPS = Number(args.reps);
const WORKERS = Number(args.workers);
const BATCH = Number(args.batch);
const SELF = fileURLToPath(import.meta.url);
const PGBENCH_DIR = fileURLToPath(new URL('./pgbench/', import.meta.url));

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
 * WAL this database wrote between two LSNs (pg_waldump), or the cluster-wide difference
 * when the WAL cannot be read here; `walSource` says which one a run printed.
 */
let walSource: 'database (pg_waldump)' | 'cluster-wide (LSN diff)' = 'database (pg_waldump)';
async function walBytes(client: pg.Client, from: string, to: string): Promise<number> {
  const { rows } = await client.query<{ oid: number; dir: string; diff: string }>(
    `select (select oid::int from pg_database where datname = current_database()) as oid,
            current_setting('data_directory') || '/pg_wal' as dir,
            pg_wal_lsn_diff($2::pg_lsn, $1::pg_lsn)::text as diff`,
    [from, to],
  );
  const row = rows[0]!;
  const own = await walBytesOfDatabase(row.dir, row.oid, from, to);
  if (own !== null) return own;
  walSource = 'cluster-wide (LSN diff)';
  return Number(row.diff);
}

interface Run {
  system: string;
  perSecond: number;
  walPerItem: number;
  statementsPerItem?: number;
  triggerCallsPerItem?: number;
  conflicts?: number;
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

async function loadKeelAttempts(client: pg.Client, nowMs: number): Promise<void> {
  await client.query(
    `insert into settle.attempts (receipt_id, finalized_at, work_kind, attempts, next_visible_at_ms, row_version,
     updated_at_ms)
     select 'rcpt_' || lpad(n::text, 8, '0'), $1::bigint - 5000, 'pending_observation', 0,
     $1::bigint - 1000 - (n % 997), 0, $1::bigint - 1000
     from generate_series(1, $2::int) as n`,
    [nowMs, ITEMS],
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

async function runKeel(url: string): Promise<Run> {
  return withClient(url, async (client) => {
    await loadKeelAttempts(client, Date.now());
    const children = Array.from({ length: WORKERS }, (_, i) =>
      forkWorker('keel', url, `bench-worker-${i + 1}`, args['keel-path']!),
    );
    await Promise.all(children.map((c) => c.ready));
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
    const { rows } = await client.query<{ left: string }>('select count(*)::text as left from settle.attempts');
    if (Number(rows[0]!.left) !== 0 || settled !== ITEMS)
      throw new Error(`keel left ${rows[0]!.left} rows, settled ${settled}`);
    const calls = (await triggerCalls(client)) - callsBefore;
    return {
      system: `keel (${args['keel-path']})`,
      perSecond: settled / elapsed,
      walPerItem: wal / settled,
      statementsPerItem: statements / settled,
      triggerCallsPerItem: calls / settled,
      conflicts: reports.reduce((sum, r) => sum + (r?.conflicts ?? 0), 0),
    };
  });
}

/** Starts the workers on an empty queue, then queues every item in one transaction: the clock starts at its commit. */
async function runQueue(
  system: string,
  url: string,
  role: string,
  extra: string,
  load: (client: pg.Client) => Promise<void>,
  emptyQuery: string,
): Promise<Run> {
  const children = Array.from({ length: WORKERS }, (_, i) => forkWorker(role, url, `w${i}`, extra));
  await Promise.all(children.map((c) => c.ready));
  return withClient(url, async (client) => {
    await load(client);
    const lsn = await walLsn(client);
    const started = performance.now();
    await waitEmpty(client, emptyQuery);
    const elapsed = (performance.now() - started) / 1000;
    const wal = await walBytes(client, lsn, await walLsn(client));
    for (const c of children) c.send({ type: 'stop' });
    await Promise.all(children.map((c) => c.exited));
    return { system, perSecond: ITEMS / elapsed, walPerItem: wal / ITEMS };
  });
}

async function runGraphile(url: string): Promise<Run> {
  await runMigrations({ connectionString: url, logger: new Logger(() => () => {}) });
  return runQueue(
    'graphile-worker',
    url,
    'graphile',
    args['graphile-concurrency']!,
    (client) =>
      client
        .query(
          `select count(*) from graphile_worker.add_jobs(array(
           select row('settle', json_build_object('n', n), null, null, null, null, null, null)::graphile_worker.job_spec
           from generate_series(1, $1::int) as n))`,
          [ITEMS],
        )
        .then(() => undefined),
    'select exists (select 1 from graphile_worker._private_jobs) as left',
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
    (client) =>
      client
        .query(
          `insert into pgboss.job (name, data) select 'settle', json_build_object('n', n)::jsonb
           from generate_series(1, $1::int) as n`,
          [ITEMS],
        )
        .then(() => undefined),
    `select exists (select 1 from pgboss.job where name = 'settle' and state < 'completed') as left`,
  );
}

function pgbenchBinary(): string {
  return process.env.PGBENCH ?? '/usr/lib/postgresql/15/bin/pgbench';
}

async function runPgbench(
  system: string,
  url: string,
  script: string,
  prepare: (client: pg.Client, nowMs: number) => Promise<void>,
  leftQuery: string,
): Promise<Run> {
  return withClient(url, async (client) => {
    const nowMs = Date.now();
    await prepare(client, nowMs);
    // Each transaction takes 100 rows; a few extra per client find the queue empty.
    const perClient = Math.ceil(ITEMS / BATCH / WORKERS) + 5;
    const lsn = await walLsn(client);
    const started = performance.now();
    await new Promise<void>((resolve, reject) => {
      const child = spawn(
        pgbenchBinary(),
        [
          '-n',
          '-c',
          String(WORKERS),
          '-j',
          String(WORKERS),
          '-t',
          String(perClient),
          '-D',
          `now=${nowMs}`,
          '-f',
          `${PGBENCH_DIR}${script}`,
          url,
        ],
        {
          stdio: ['ignore', 'ignore', 'inherit'],
        },
      );
      child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`pgbench exited with ${code}`))));
    });
    const elapsed = (performance.now() - started) / 1000;
    const wal = await walBytes(client, lsn, await walLsn(client));
    const { rows } = await client.query<{ left: string }>(leftQuery);
    if (Number(rows[0]!.left) !== 0) throw new Error(`${system} left ${rows[0]!.left} rows`);
    return { system, perSecond: ITEMS / elapsed, walPerItem: wal / ITEMS };
  });
}

const SYSTEMS: Record<string, (db: string) => Promise<Run>> = {
  keel: async (db) => runKeel(await keelDatabase(db)),
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
      'claim-delete.sql',
      async (client) => {
        await client.query(
          'create table bench_queue (id bigint primary key, run_at bigint not null, payload jsonb not null)',
        );
        await client.query(
          `insert into bench_queue select n, 0, json_build_object('n', n) from generate_series(1, $1::int) as n`,
          [ITEMS],
        );
        await client.query('vacuum analyze bench_queue');
      },
      'select count(*)::text as left from bench_queue',
    );
  },
  'pgbench-keel': async (db) =>
    runPgbench(
      'pgbench Keel own shape',
      await keelDatabase(db),
      'keel-shape.sql',
      loadKeelAttempts,
      'select count(*)::text as left from settle.attempts',
    ),
};

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

async function main() {
  const systems = args.systems!.split(',');
  const runs: Run[] = [];
  console.log(
    `# ${ITEMS} due items, ${WORKERS} workers, claim batch ${BATCH}, ${REPS} interleaved repetitions, ` +
      `keel path ${args['keel-path']}`,
  );
  try {
    for (let rep = 1; rep <= REPS; rep += 1) {
      for (const system of systems) {
        const factory = SYSTEMS[system];
        if (!factory) throw new Error(`unknown system ${system}`);
        const db = `keel_bench_${system.replace(/-/g, '_')}_${process.pid}_${rep}`;
        try {
          const run = await factory(db);
          runs.push(run);
          console.log(
            `rep ${rep} ${run.system}: ${fmt(run.perSecond)} settlements/s, WAL ${fmt(run.walPerItem)} B/item` +
              (run.statementsPerItem !== undefined
                ? `, ${fmt(run.statementsPerItem, 3)} statements (= round ` +
                  `trips)/settlement, ${fmt(run.triggerCallsPerItem!, 2)} trigger calls/settlement, ${run.conflicts} ` +
                  `conflicts`
                : ''),
          );
        } finally {
          await admin(`drop database if exists ${db} with (force)`);
        }
      }
    }
  } finally {
    if (keelTemplate) await admin(`drop database if exists ${keelTemplate} with (force)`);
  }
  console.log(`\n| system | settlements/s (median) | range | WAL bytes/item, ${walSource} |`);
  console.log('|---|---:|---:|---:|');
  const bySystem = new Map<string, Run[]>();
  for (const run of runs) bySystem.set(run.system, [...(bySystem.get(run.system) ?? []), run]);
  const medians = new Map<string, number>();
  for (const [system, list] of bySystem) {
    const rates = list.map((r) => r.perSecond);
    medians.set(system, median(rates));
    console.log(
      `| ${system} | ${fmt(median(rates))} | ${fmt(Math.min(...rates))}-${fmt(Math.max(...rates))} ` +
        `| ${fmt(median(list.map((r) => r.walPerItem)))} |`,
    );
  }
  const keel = [...bySystem.keys()].find((s) => s.startsWith('keel'));
  if (keel) {
    const k = bySystem.get(keel)!;
    console.log(
      `\n${keel}: ${fmt(median(k.map((r) => r.statementsPerItem!)), 3)} statements/settlement and as many round ` +
        `trips (counted client-side: pg_stat_statements is not in shared_preload_libraries), ` +
        `${fmt(median(k.map((r) => r.triggerCallsPerItem!)), 3)} settle.* trigger function calls/settlement ` +
        `(pg_stat_user_functions), ${fmt(median(k.map((r) => r.walPerItem)))} WAL bytes/settlement (${walSource})`,
    );
    for (const [label, other] of [
      ['graphile-worker', 'graphile-worker'],
      ['pg-boss', 'pg-boss'],
      ['pgbench own shape', 'pgbench Keel own shape'],
      ['pgbench claim-and-delete', 'pgbench claim-100-and-delete'],
    ] as const) {
      const theirs = medians.get(other);
      if (theirs) console.log(`Keel/${label}: ${fmt(medians.get(keel)! / theirs, 2)}x`);
    }
  }
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
