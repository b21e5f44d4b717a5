import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { checkProviderAtStart } from '../auth/oidc-discovery';
import { parseSignInSettings } from '../config/oidc';
import type { SettingError } from '../config/setting-error';
import { createDatabase, createPool } from '../db/client';
import { migrateDatabase } from '../db/migrate';
import { sourceFingerprint } from '../../next.config';
import { seedDemo } from '../demo/seed';
import { describeForLog } from '../observability/log-sanitizer';
import { resolveEnvironment, SettingsRefused, type ResolvedEnvironment } from './environment';
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
const BUILD_ID = join('.next', 'BUILD_ID');

/** The sources the build in .next was made from (its build id, next.config.ts), or null without a build. */
function builtFrom(): string | null {
  return existsSync(BUILD_ID) ? readFileSync(BUILD_ID, 'utf8').trim() : null;
}

/**
 * Builds the console unless .next holds a build of the current sources, however it was
 * made (`npm run build` or an earlier start). `track` is told of the build process, so a
 * stop signal during the build ends it.
 */
async function ensureProductionBuild(track: (build: ChildProcess) => void): Promise<void> {
  const fingerprint = sourceFingerprint(process.cwd());
  const built = builtFrom();
  if (built === fingerprint) {
    log('serving the build in .next, made from these sources');
    return;
  }
  log(
    built === null
      ? 'building the console (next build); later starts reuse the build until the source changes'
      : 'building the console (next build): the sources changed since the build in .next was made',
  );
  const build = spawn(process.execPath, [NEXT_BIN, 'build'], {
    stdio: 'inherit',
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' },
  });
  track(build);
  const [code, signal] = (await once(build, 'exit')) as [number | null, NodeJS.Signals | null];
  if (code !== 0) throw new Error(`next build failed (${code ?? signal})`);
  if (builtFrom() !== fingerprint)
    log(
      'the sources changed during the build, or it does not name them (next.config.ts, generateBuildId): ' +
        'the next start builds again',
    );
}

/** `start --no-build` (the container image, whose root filesystem is read-only): the build in .next as it is. */
function requirePreparedBuild(): void {
  if (!existsSync(join('.next', 'BUILD_ID')))
    throw new Error('--no-build: there is no production build in .next (npm run build makes one)');
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

/** The signals that stop the launcher, with the exit status that stands for each (128 + its number). */
const STOP_SIGNALS = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;
type StopSignal = keyof typeof STOP_SIGNALS;
type Stop = { code: number } | { signal: StopSignal };

/**
 * Ends the launcher once everything it started has stopped. After a signal it dies of
 * that signal, as a program that cleans up on one should: its parent then sees how it
 * ended (npm passes it on; systemd counts death by SIGTERM as a clean stop but exit
 * status 143 as a failure). Process 1 in a container is not killed by its own signal,
 * so there it exits with 128 + the signal's number.
 */
function exitLauncher(how: Stop): never {
  if ('signal' in how) {
    for (const signal of Object.keys(STOP_SIGNALS)) process.removeAllListeners(signal);
    process.kill(process.pid, how.signal);
  }
  process.exit('signal' in how ? STOP_SIGNALS[how.signal] : how.code);
}

/** Stops a child process: SIGTERM, then SIGKILL after 10 s. */
async function stopChild(child: ChildProcess | null): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

/** Single sign-on's provider checked before anything starts: the line that refuses the start, or null. */
async function checkSingleSignOn(): Promise<string | null> {
  const errors: SettingError[] = [];
  const { oidc } = parseSignInSettings(process.env, errors);
  // Bad KEEL_OIDC_* settings are reported with the others, by resolveEnvironment.
  if (!oidc || errors.length > 0) return null;
  return checkProviderAtStart(oidc, log);
}

/**
 * `keel start` / `keel dev`: the provider check, database, migrations, demo data, the
 * build, then the Next.js server. SIGINT, SIGTERM or SIGHUP to this process, at any
 * point, stops what has started (the build or the server, then the embedded PostgreSQL).
 */
export async function startConsole(
  mode: 'start' | 'dev',
  options: { fresh?: boolean; build?: boolean } = {},
): Promise<number> {
  const startedAt = performance.now();
  let environment: Promise<ResolvedEnvironment | null> = Promise.resolve(null);
  let child: ChildProcess | null = null;
  let exiting = false;
  const shutdown = async (how: Stop) => {
    if (exiting) return;
    exiting = true;
    await stopChild(child);
    // A signal while the database starts waits for it to be up, then stops it.
    const resolved = await environment.catch(() => null);
    await resolved?.stop();
    log('stopped');
    exitLauncher(how);
  };
  // Once stopping, the start's own steps fail as their processes go: the shutdown ends the launcher.
  const stopped = () => new Promise<number>(() => {});
  for (const signal of Object.keys(STOP_SIGNALS) as StopSignal[]) process.on(signal, () => void shutdown({ signal }));
  // Under a shell that does not exec its last command (`sh -c "node ..."`), a signal to the
  // shell kills it without reaching us: a changed parent means whoever started us is gone.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) void shutdown({ code: 143 });
  }, 500).unref();

  const refusal = await checkSingleSignOn();
  if (exiting) return stopped();
  if (refusal) {
    process.stderr.write(`${refusal}\n`);
    return 1;
  }
  environment = resolveEnvironment(log, options);
  let resolved: ResolvedEnvironment;
  try {
    resolved = (await environment)!;
  } catch (error) {
    if (exiting) return stopped();
    if (error instanceof SettingsRefused) {
      process.stderr.write(`${error.message}\n`);
      return 1;
    }
    throw error;
  }
  if (exiting) return stopped();
  const { settings, env } = resolved;

  try {
    const pool = createPool(settings.databaseUrl!, 2);
    try {
      const migrated = await migrateDatabase(pool);
      if (!migrated.ok) {
        process.stderr.write(`[keel] refusing to start (${migrated.error.code}): ${migrated.error.message}\n`);
        await shutdown({ code: 1 });
        return 1;
      }
      log(
        `database ready: oxide_batch schema ${migrated.value.runtimeSchema} at version ` +
          `${migrated.value.runtimeVersion}`,
      );
      if (settings.demo) {
        const seeded = await seedDemo(createDatabase(pool), settings, log);
        log(seeded ? 'demo data seeded' : 'demo data already present');
      }
    } finally {
      await pool.end();
    }
    if (mode === 'start' && options.build === false) requirePreparedBuild();
    else if (mode === 'start' && !exiting) await ensureProductionBuild((build) => (child = build));
  } catch (error) {
    if (exiting) return stopped();
    process.stderr.write(`[keel] start failed: ${describeForLog(error)}\n`);
    await shutdown({ code: 1 });
    return 1;
  }
  if (exiting) return stopped();

  const port = settings.port;
  const server = spawn(process.execPath, [...SERVER_NODE_FLAGS, SERVER, mode, String(port)], {
    stdio: 'inherit',
    env: {
      ...env,
      NODE_ENV: mode === 'dev' ? 'development' : 'production',
      NEXT_TELEMETRY_DISABLED: '1',
      KEEL_LAUNCHED: '1',
    } as unknown as NodeJS.ProcessEnv,
  });
  child = server;
  server.once('exit', (code) => void shutdown({ code: code ?? 1 }));
  if (await waitForHealth(reachableOrigin(settings.host, port), server)) {
    const seconds = ((performance.now() - startedAt) / 1000).toFixed(1);
    log(`console ready on http://localhost:${port} after ${seconds}s`);
    if (settings.demo)
      log(
        `demo users: viewer, operator, approver, approver2, support, admin (password: ` +
          `${settings.demoPassword === DEMO_PASSWORD ? DEMO_PASSWORD : 'KEEL_DEMO_PASSWORD'})`,
      );
  }
  return new Promise<number>(() => {}); // runs until a signal or the server exits
}
