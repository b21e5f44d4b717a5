import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../../lib/db/embedded';

/** `keel start` run the two ways a user runs it: the launcher itself, or `npm start`. */
export const LAUNCHER = [
  process.execPath,
  '--import',
  'tsx',
  '--conditions=react-server',
  'bin/keel.ts',
  'start',
] as const;
export const NPM_START = ['npm', 'start'] as const;

/** What launch() started and is still running. */
const running = new Set<ChildProcess>();

/**
 * Stops whatever launch() started that a failed test left running (SIGTERM, SIGKILL after
 * 20 s), so no console or PostgreSQL outlives its spec.
 */
export async function stopLaunched(): Promise<void> {
  await Promise.all(
    [...running].map(async (child) => {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    }),
  );
}

export interface Launched {
  /** The process started: the launcher, or npm. */
  process: ChildProcess;
  port: number;
  /** Seconds from the spawn to the first healthy answer. */
  readySeconds: number;
  output(): string;
  /** How the process ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts Keel in `cwd` on the embedded PostgreSQL of `home` (by default `<cwd>/.keel`), on
 * ports of its own, and waits for /api/health; throws with what it printed if it exits
 * first or `timeoutMs` passes.
 */
export async function launch(
  command: readonly string[],
  options: { cwd?: string; home?: string; env?: Record<string, string>; timeoutMs?: number },
): Promise<Launched> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    KEEL_EMBEDDED_PG_PORT: String(await freePort()),
    KEEL_DEMO_RUNTIME: '0',
    NODE_ENV: 'production',
    ...(options.home ? { KEEL_HOME: options.home } : {}),
    ...options.env,
  };
  delete env.DATABASE_URL;
  if (!options.home) delete env.KEEL_HOME;
  const started = performance.now();
  const child = spawn(command[0]!, command.slice(1), { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  child.once('exit', () => running.delete(child));
  const chunks: string[] = [];
  child.stdout!.on('data', (chunk: Buffer) => chunks.push(chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => chunks.push(chunk.toString()));
  const exited = once(child, 'exit').then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }));
  const output = () => chunks.join('');
  const deadline = Date.now() + (options.timeoutMs ?? 180_000);
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`keel exited (${child.exitCode ?? child.signalCode}) before serving:\n${output().slice(-4000)}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`keel did not answer /api/health in time:\n${output().slice(-4000)}`);
    }
    try {
      if ((await fetch(`http://127.0.0.1:${port}/api/health`)).ok) break;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { process: child, port, readySeconds: (performance.now() - started) / 1000, output, exited };
}

/** The postmaster's pid, from the cluster's own pid file under `home`. */
export function postmasterPid(home: string): number {
  return Number(readFileSync(join(home, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
}

/** The children of `pid` whose command line matches `pattern`. */
export function childPids(pid: number, pattern: string): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(pid), '-f', pattern], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function commandLine(pid: number): string {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
}
