import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from '../../lib/db/embedded';
import { e2eDatabase, e2eDatabaseUrl } from './database';

/**
 * A PostgreSQL primary and a streaming standby made from it with pg_basebackup, both on
 * loopback ports of their own, for the two-instance spec. The server binaries are the
 * machine's (Debian's postgresql package; `npm test` installs it when missing), since
 * the embedded PostgreSQL ships no pg_basebackup. As root, the clusters run as the
 * `postgres` user, which PostgreSQL requires.
 */
export interface ReplicatedPostgres {
  primaryUrl: string;
  replicaUrl: string;
  /** A client on the primary, or on the standby. */
  connect(which: 'primary' | 'replica'): Promise<pg.Client>;
  stopReplica(): void;
  startReplica(): void;
  stop(): void;
}

function serverBinaries(): string {
  const given = process.env.KEEL_PG_BIN;
  if (given) return given;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter(
          (v) => existsSync(join(root, v, 'bin', 'pg_basebackup')) && existsSync(join(root, v, 'bin', 'postgres')),
        )
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0) {
    throw new Error(
      'No PostgreSQL server binaries with pg_basebackup under /usr/lib/postgresql: ' +
        'install the postgresql package, or set KEEL_PG_BIN',
    );
  }
  return join(root, versions[0]!, 'bin');
}

const CLUSTER_PREFIX = 'keel-replica-';
/** The test process that made a cluster folder: when it is gone, so is whoever would have stopped the cluster. */
const OWNER_FILE = 'owner.pid';

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Stops and removes the clusters of earlier runs whose test process died without its
 * afterAll (a killed Playwright run), so they do not hold ports, memory and disk until
 * the machine restarts. Clusters of a run still going are left alone.
 */
function removeOrphanedClusters(pgCtl: (dir: string) => void): void {
  for (const name of readdirSync(tmpdir()).filter((n) => n.startsWith(CLUSTER_PREFIX))) {
    const base = join(tmpdir(), name);
    const owner = Number(existsSync(join(base, OWNER_FILE)) ? readFileSync(join(base, OWNER_FILE), 'utf8') : NaN);
    if (Number.isInteger(owner) && isRunning(owner)) continue;
    for (const dir of ['replica', 'primary'].map((d) => join(base, d))) {
      try {
        if (existsSync(join(dir, 'postmaster.pid'))) pgCtl(dir);
      } catch {
        // stopped already, or not a cluster
      }
    }
    rmSync(base, { recursive: true, force: true });
  }
}

export async function startReplicatedPostgres(): Promise<ReplicatedPostgres> {
  const bin = serverBinaries();
  const asRoot = process.getuid?.() === 0;
  const runAnywhere = (tool: string, args: string[]) =>
    asRoot
      ? execFileSync('runuser', ['-u', 'postgres', '--', join(bin, tool), ...args], {
          stdio: ['ignore', 'ignore', 'pipe'],
        })
      : execFileSync(join(bin, tool), args, { stdio: ['ignore', 'ignore', 'pipe'] });
  removeOrphanedClusters((dir) => runAnywhere('pg_ctl', ['-D', dir, '-m', 'immediate', '-w', 'stop']));
  const base = mkdtempSync(join(tmpdir(), CLUSTER_PREFIX));
  writeFileSync(join(base, OWNER_FILE), String(process.pid));
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(base, uid, gid);
  }
  chmodSync(base, 0o700);
  const run = (tool: string, args: string[]) => {
    const command = asRoot ? 'runuser' : join(bin, tool);
    const argv = asRoot ? ['-u', 'postgres', '--', join(bin, tool), ...args] : args;
    execFileSync(command, argv, { stdio: ['ignore', 'ignore', 'pipe'], cwd: base });
  };
  const [primaryPort, replicaPort] = [await freePort(), await freePort()];
  const primary = join(base, 'primary');
  const replica = join(base, 'replica');
  // Loopback only; trust, as initdb writes it, is for this throwaway test cluster alone.
  run('initdb', ['-D', primary, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C']);
  const serverOptions = (port: number) =>
    `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${base} -c max_connections=100 -c fsync=off`;
  const startCluster = (dir: string, port: number) =>
    run('pg_ctl', ['-D', dir, '-o', serverOptions(port), '-l', `${dir}.log`, '-w', '-t', '60', 'start']);
  const stopCluster = (dir: string) => {
    if (existsSync(join(dir, 'postmaster.pid'))) run('pg_ctl', ['-D', dir, '-m', 'fast', '-w', 'stop']);
  };
  startCluster(primary, primaryPort);
  try {
    const admin = new pg.Client({ host: '127.0.0.1', port: primaryPort, user: 'postgres', database: 'postgres' });
    await admin.connect();
    await admin.query('create database keel');
    await admin.end();
    // -R writes standby.signal and primary_conninfo: the copy starts as a streaming standby.
    run('pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(primaryPort),
      '-U',
      'postgres',
      '-D',
      replica,
      '-R',
      '-X',
      'stream',
      '-c',
      'fast',
    ]);
    startCluster(replica, replicaPort);
  } catch (error) {
    stopCluster(primary);
    rmSync(base, { recursive: true, force: true });
    throw error;
  }
  const url = (port: number) => `postgres://postgres@127.0.0.1:${port}/keel`;
  return {
    primaryUrl: url(primaryPort),
    replicaUrl: url(replicaPort),
    async connect(which) {
      const client = new pg.Client({ connectionString: url(which === 'primary' ? primaryPort : replicaPort) });
      // A server stopped by the spec ends its connections: the next query fails, the process does not.
      client.on('error', () => {});
      await client.connect();
      return client;
    },
    stopReplica: () => stopCluster(replica),
    startReplica: () => startCluster(replica, replicaPort),
    stop() {
      for (const dir of [replica, primary]) {
        try {
          stopCluster(dir);
        } catch {
          // stopped already
        }
      }
      rmSync(base, { recursive: true, force: true });
    },
  };
}

/** A Keel instance started as a user starts one (`keel start`), on an existing database. */
export interface KeelInstance {
  name: string;
  port: number;
  url: string;
  launcher: ChildProcess;
  /** Everything the instance has printed so far. */
  output(): string;
  /** The Next.js server process under the launcher, killed with SIGKILL: no goodbye, no cleanup. */
  kill(): void;
  stop(): Promise<void>;
}

export async function startKeelInstance(name: string, env: Record<string, string>): Promise<KeelInstance> {
  const port = await freePort();
  const output: string[] = [];
  // Each instance's own log, beside Playwright's results, for a failure's post-mortem.
  mkdirSync('.keel/e2e-results', { recursive: true });
  const log = createWriteStream(`.keel/e2e-results/instance-${name}.log`);
  // The build the e2e server made, as it is: a source edited during the run never rebuilds .next under it.
  const command = ['--import', 'tsx', '--conditions=react-server', 'bin/keel.ts', 'start', '--no-build'];
  const launcher = spawn(process.execPath, command, {
    env: { ...process.env, ...env, PORT: String(port), KEEL_INSTANCE_ID: name, NODE_ENV: 'production' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  for (const stream of [launcher.stdout, launcher.stderr]) {
    stream?.on('data', (chunk: Buffer) => {
      output.push(chunk.toString());
      log.write(chunk);
    });
  }
  const url = `http://localhost:${port}`;
  for (;;) {
    if (launcher.exitCode !== null)
      throw new Error(`keel instance ${name} exited (${launcher.exitCode}):\n${output.join('').slice(-4000)}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/api/health`)).ok) break;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const exited = new Promise<void>((resolve) => launcher.once('exit', () => resolve()));
  return {
    name,
    port,
    url,
    launcher,
    output: () => output.join(''),
    kill() {
      const pids = execFileSync('pgrep', ['-P', String(launcher.pid)])
        .toString()
        .trim()
        .split('\n')
        .filter(Boolean);
      for (const pid of pids) process.kill(Number(pid), 'SIGKILL');
    },
    async stop() {
      if (launcher.exitCode === null && launcher.signalCode === null) {
        launcher.kill('SIGTERM');
        await exited;
      }
    },
  };
}

/** A spec file's own Keel instance: its database's name, and the instance once started. */
export interface OwnInstance {
  database: string;
  instance(): KeelInstance;
}

/**
 * A Keel instance on a database of its own in the e2e server's cluster (demo users and data,
 * no demo runtime), started before the spec file's first test; stopped, and its database
 * dropped, after its last. Call in the spec's top level; `env` adds to or overrides the settings.
 */
export function ownKeelInstance(
  test: {
    beforeAll: (fn: () => Promise<void>) => void;
    afterAll: (fn: () => Promise<void>) => void;
    setTimeout: (ms: number) => void;
  },
  name: string,
  env: Record<string, string> = {},
): OwnInstance {
  const database = `keel_${name.replace(/\W/g, '_')}_${Date.now().toString(36)}`;
  let keel: KeelInstance | undefined;
  const adminQuery = async (statement: string) => {
    const admin = await e2eDatabase();
    try {
      await admin.query(statement);
    } finally {
      await admin.end();
    }
  };
  test.beforeAll(async () => {
    test.setTimeout(240_000);
    await adminQuery(`create database ${database}`);
    keel = await startKeelInstance(name, {
      DATABASE_URL: e2eDatabaseUrl(database),
      KEEL_CHECKPOINT_KEY: 'beef'.repeat(16),
      KEEL_DEMO: '1',
      KEEL_DEMO_RUNTIME: '0',
      KEEL_SIGNIN_RATE_LIMIT: '1000',
      ...env,
    });
  });
  test.afterAll(async () => {
    await keel?.stop();
    await adminQuery(`drop database if exists ${database} with (force)`);
  });
  return {
    database,
    instance() {
      if (!keel) throw new Error(`the keel instance ${name} has not started`);
      return keel;
    },
  };
}
