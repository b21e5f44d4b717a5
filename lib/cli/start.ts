import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { createDatabase, createPool } from '../db/client';
import { migrateDatabase } from '../db/migrate';
import { seedDemo } from '../demo/seed';
import { describeForLog } from '../server/log-sanitizer';
import { resolveEnvironment, SettingsRefused } from './environment';
import { DEMO_PASSWORD } from '../config/settings';

const log = (line: string) => process.stdout.write(`[keel] ${line}\n`);
const NEXT_BIN = join('node_modules', 'next', 'dist', 'bin', 'next');
/** Next.js behind Keel's own Node server, which derives the client address from the socket. */
const SERVER = join('lib', 'cli', 'server.mjs');
/**
 * V8 flags of the HTTP server process (and of its HTTP processes, which inherit them).
 * A page render allocates a few megabytes that die young; with the default 16 MB young
 * generation they are scavenged and partly promoted every few renders. With 64 MB
 * semi-spaces the same page views spent 40% less time collecting and 11% less main-thread
 * CPU in all (docs/performance.md), for a young generation of up to 192 MB instead of
 * 48 MB per process.
 */
export const SERVER_NODE_FLAGS = ['--max-semi-space-size=64'] as const;
const BUILD_INPUTS = ['app', 'components', 'lib', 'public', 'next.config.ts', 'postcss.config.mjs', 'instrumentation.ts', 'package-lock.json'];
const BUILD_STAMP = join('.next', 'keel-build-stamp');

/** A cheap fingerprint of what `next build` reads, so a start rebuilds only after a change. */
function sourceFingerprint(): string {
  const hash = createHash('sha256');
  const visit = (path: string) => {
    if (!existsSync(path)) return;
    const stat = statSync(path);
    if (stat.isDirectory()) {
      for (const entry of readdirSync(path).sort()) visit(join(path, entry));
    } else {
      hash.update(`${path}\0${stat.size}\0${stat.mtimeMs}\n`);
    }
  };
  BUILD_INPUTS.forEach(visit);
  return hash.digest('hex');
}

function ensureProductionBuild(): void {
  const fingerprint = sourceFingerprint();
  const current = existsSync(BUILD_STAMP) ? readFileSync(BUILD_STAMP, 'utf8') : '';
  if (existsSync(join('.next', 'BUILD_ID')) && current === fingerprint) return;
  log('building the console (next build); later starts reuse the build until the source changes');
  const build = spawnSync(process.execPath, [NEXT_BIN, 'build'], { stdio: 'inherit', env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' } });
  if (build.status !== 0) throw new Error('next build failed');
  writeFileSync(BUILD_STAMP, fingerprint);
}

/** `start --no-build` (the container image, whose root filesystem is read-only): the build in .next as it is. */
function requirePreparedBuild(): void {
  if (!existsSync(join('.next', 'BUILD_ID'))) throw new Error('--no-build: there is no production build in .next (npm run build makes one)');
}

/** Where this machine reaches the server listening on `host` (KEEL_HOST; every interface when unset). */
function reachableOrigin(host: string | undefined, port: number): string {
  if (host === undefined || host === '0.0.0.0') return `http://127.0.0.1:${port}`;
  if (host === '::') return `http://[::1]:${port}`;
  return `http://${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
}

async function waitForHealth(origin: string, child: ChildProcess): Promise<boolean> {
  for (;;) {
    if (child.exitCode !== null) return false;
    try {
      const response = await fetch(`${origin}/api/health`);
      if (response.ok) return true;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** `keel start` / `keel dev`: database, migrations, demo data, then the Next.js server. */
export async function startConsole(mode: 'start' | 'dev', options: { fresh?: boolean; build?: boolean } = {}): Promise<number> {
  const startedAt = performance.now();
  let resolved;
  try {
    resolved = await resolveEnvironment(log, options);
  } catch (error) {
    if (error instanceof SettingsRefused) {
      process.stderr.write(`${error.message}\n`);
      return 1;
    }
    throw error;
  }
  const { settings, env } = resolved;
  let child: ChildProcess | null = null;
  let exiting = false;
  const shutdown = async (code: number) => {
    if (exiting) return;
    exiting = true;
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child?.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    await resolved.stop();
    log('stopped');
    process.exit(code);
  };
  process.on('SIGINT', () => void shutdown(130));
  process.on('SIGTERM', () => void shutdown(143));
  process.on('SIGHUP', () => void shutdown(129));
  // `npm start` runs us under `sh -c`, which dies on SIGTERM without passing it on:
  // a changed parent means whoever started us is gone, so stop everything we started.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) void shutdown(143);
  }, 500).unref();

  try {
    const pool = createPool(settings.databaseUrl!, 2);
    try {
      const migrated = await migrateDatabase(pool);
      if (!migrated.ok) {
        process.stderr.write(`[keel] refusing to start (${migrated.error.code}): ${migrated.error.message}\n`);
        await shutdown(1);
        return 1;
      }
      log(`database ready: oxide_batch schema ${migrated.value.runtimeSchema} at version ${migrated.value.runtimeVersion}`);
      if (settings.demo) {
        const seeded = await seedDemo(createDatabase(pool), settings, log);
        log(seeded ? 'demo data seeded' : 'demo data already present');
      }
    } finally {
      await pool.end();
    }
    if (mode === 'start' && options.build === false) requirePreparedBuild();
    else if (mode === 'start') ensureProductionBuild();
  } catch (error) {
    process.stderr.write(`[keel] start failed: ${describeForLog(error)}\n`);
    await shutdown(1);
    return 1;
  }

  const port = settings.port;
  const server = spawn(process.execPath, [...SERVER_NODE_FLAGS, SERVER, mode, String(port)], {
    stdio: 'inherit',
    env: { ...env, NODE_ENV: mode === 'dev' ? 'development' : 'production', NEXT_TELEMETRY_DISABLED: '1', KEEL_LAUNCHED: '1' } as unknown as NodeJS.ProcessEnv,
  });
  child = server;
  server.once('exit', (code) => void shutdown(code ?? 1));
  if (await waitForHealth(reachableOrigin(settings.host, port), server)) {
    const seconds = ((performance.now() - startedAt) / 1000).toFixed(1);
    log(`console ready on http://localhost:${port} after ${seconds}s`);
    if (settings.demo) log(`demo users: viewer, operator, approver, approver2, support, admin (password: ${settings.demoPassword === DEMO_PASSWORD ? DEMO_PASSWORD : 'KEEL_DEMO_PASSWORD'})`);
  }
  return new Promise<number>(() => {}); // runs until a signal or the server exits
}
