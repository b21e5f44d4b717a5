import { expect, test } from '@playwright/test';
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { discardEmbeddedCluster, RELOCATION_ROOT } from '../lib/db/embedded';
import { childPids, isAlive, launch, NPM_START, stopLaunched } from './support/launcher';

/**
 * The first day on a fresh machine, as root: a clone in a folder only root may enter
 * (0700, like /root or `mktemp -d`), `npm run build`, then `npm start`. The start serves
 * that build as it is; the embedded PostgreSQL, which runs as the `postgres` user, gets
 * its binaries and its cluster where that user can reach them; and SIGINT to npm's PID
 * stops it all. (As another user, the folder is that user's own, and the same steps run.)
 */

const asRoot = process.getuid?.() === 0;
let folder: string;
let clone: string;

test.beforeAll(() => {
  folder = mkdtempSync(join(tmpdir(), 'keel-first-start-'));
  expect(statSync(folder).mode & 0o777).toBe(0o700);
  clone = join(folder, 'keel');
  // The checkout's files as a clone of this work has them (tracked and new, not ignored), with fresh times.
  for (const file of workingTreeFiles()) {
    mkdirSync(join(clone, dirname(file)), { recursive: true });
    copyFileSync(file, join(clone, file));
  }
  // `npm ci` would give the same node_modules; hard links make them in a second (a copy where they cannot).
  try {
    execFileSync('cp', ['-al', 'node_modules', join(clone, 'node_modules')]);
  } catch {
    execFileSync('cp', ['-a', 'node_modules', join(clone, 'node_modules')]);
  }
});

/** The files of the checkout a clone would have: git's tracked and new ones, or without git all but what it ignores. */
function workingTreeFiles(): string[] {
  try {
    const listed = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    return listed.split('\0').filter((file) => file && existsSync(file));
  } catch {
    const ignored = new Set([
      '.git',
      'node_modules',
      '.next',
      '.keel',
      'test-results',
      'playwright-report',
      'next-env.d.ts',
    ]);
    const walk = (folder: string): string[] =>
      readdirSync(folder, { withFileTypes: true })
        .filter((entry) => !ignored.has(entry.name) && !entry.name.endsWith('.tsbuildinfo'))
        .flatMap((entry) => (entry.isDirectory() ? walk(join(folder, entry.name)) : [join(folder, entry.name)]));
    return walk('.').map((file) => file.replace(/^\.\//, ''));
  }
}

test.afterAll(async () => {
  await stopLaunched();
  if (!clone) return;
  discardEmbeddedCluster(join(clone, '.keel'));
  rmSync(folder, { recursive: true, force: true });
});

test('a clone in a 0700 folder: `npm run build`, then `npm start` serves it on the embedded PostgreSQL', async () => {
  test.setTimeout(900_000);
  // At a lower priority: the specs on the e2e server run beside this one and answer to timeouts.
  const build = spawn('nice', ['-n', '10', 'npm', 'run', 'build'], {
    cwd: clone,
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let buildOutput = '';
  for (const stream of [build.stdout, build.stderr])
    stream.on('data', (chunk: Buffer) => (buildOutput = `${buildOutput}${chunk.toString()}`.slice(-4000)));
  const [buildCode] = await once(build, 'exit');
  expect(buildCode, buildOutput).toBe(0);

  const npm = await launch(NPM_START, { cwd: clone, timeoutMs: 300_000 });
  // The build `npm run build` made is served as it is.
  expect(npm.output()).toContain('[keel] serving the build in .next, made from these sources');
  expect(npm.output()).not.toContain('building the console');
  expect(npm.output()).toContain('[keel] demo data seeded');
  expect((await fetch(`http://127.0.0.1:${npm.port}/sign-in`)).status).toBe(200);

  const home = join(clone, '.keel');
  const postgres = Number(readFileSync(join(home, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
  if (asRoot) {
    // The postgres user cannot enter the folder: its binaries and its cluster live in RELOCATION_ROOT.
    const postgresUid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    expect(readFileSync(`/proc/${postgres}/status`, 'utf8')).toMatch(new RegExp(`^Uid:\\s+${postgresUid}\\s`, 'm'));
    expect(realpathSync(`/proc/${postgres}/exe`).startsWith(`${RELOCATION_ROOT}/postgres-`)).toBe(true);
    expect(realpathSync(join(home, 'pg')).startsWith(`${RELOCATION_ROOT}/clusters/`)).toBe(true);
    expect(npm.output()).toContain(
      `[keel] the postgres user cannot enter ${home}: the embedded cluster lives in ${RELOCATION_ROOT}/clusters/`,
    );
  }

  const [launcher] = childPids(npm.process.pid!, '.');
  process.kill(npm.process.pid!, 'SIGINT');
  expect(await npm.exited).toEqual({ code: null, signal: 'SIGINT' });
  expect(npm.output()).toContain('[keel] stopped');
  expect(isAlive(launcher!)).toBe(false);
  expect(isAlive(postgres)).toBe(false);
  console.log(`first start of the clone (cluster made, migrated, seeded) ready after ${npm.readySeconds.toFixed(1)} s`);
});
