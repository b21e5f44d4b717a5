import { expect, test } from '@playwright/test';
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { discardEmbeddedCluster, freePort } from '../lib/db/embedded';
import {
  childPids,
  commandLine,
  isAlive,
  launch,
  LAUNCHER,
  NPM_START,
  postmasterPid,
  stopLaunched,
  type Launched,
} from './support/launcher';

/**
 * `keel start` under a process manager: a stop signal sent to the launcher's PID alone
 * (not its process group, as systemd with KillMode=mixed, supervisord or a container
 * runtime send it) stops the server and the embedded PostgreSQL, and the launcher dies of
 * that signal. The build in .next (made by the e2e server's own start) is served as it is.
 * docs/deployment.md, "Process managers".
 */

test.describe.configure({ mode: 'serial' });

// A cluster of this spec's own, made by its first start and reused by the others.
const home = resolve('.keel/e2e-launcher');

test.beforeAll(() => {
  discardEmbeddedCluster(home);
  rmSync(home, { recursive: true, force: true });
});

test.afterAll(async () => {
  await stopLaunched();
  discardEmbeddedCluster(home);
  rmSync(home, { recursive: true, force: true });
});

const env = { KEEL_DEMO: '0', KEEL_HOST: '127.0.0.1' };

/** The processes a stop must end: the launcher (or npm), the HTTP server under the launcher, and the postmaster. */
function processesOf(launcherPid: number) {
  const server = childPids(launcherPid, 'server\\.mjs');
  expect(server).toHaveLength(1);
  return { postgres: postmasterPid(home), server: server[0]! };
}

async function expectAllGone(keel: Launched, pids: { postgres: number; server: number }) {
  expect(keel.output()).toContain('[keel] stopped');
  expect(isAlive(pids.server)).toBe(false);
  // The launcher waits for the postmaster's own exit before it ends.
  expect(isAlive(pids.postgres)).toBe(false);
}

/** The start served the build in .next without building. */
function expectBuildReused(keel: Launched) {
  expect(keel.output()).toContain('[keel] serving the build in .next, made from these sources');
  expect(keel.output()).not.toContain('building the console');
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  test(`${signal} to the launcher's PID stops the console and its PostgreSQL`, async () => {
    test.setTimeout(240_000);
    const keel = await launch(LAUNCHER, { home, env });
    expectBuildReused(keel);
    const pids = processesOf(keel.process.pid!);
    process.kill(keel.process.pid!, signal);
    // It ends by the signal it was sent, after stopping the rest: its parent sees a stop, not a failure.
    expect(await keel.exited).toEqual({ code: null, signal });
    await expectAllGone(keel, pids);
    console.log(`launcher ready after ${keel.readySeconds.toFixed(1)} s; ${signal} stopped it and its PostgreSQL`);
  });
}

test('SIGINT to the PID of `npm start` alone reaches the launcher, which stops everything', async () => {
  test.setTimeout(120_000);
  const npm = await launch(NPM_START, { home, env });
  expectBuildReused(npm);
  // The script execs the launcher: npm's child is the launcher itself, with no shell between them to swallow SIGINT.
  const [launcher] = childPids(npm.process.pid!, '.');
  expect(commandLine(launcher!)).toMatch(/^\S*node --import tsx --conditions=react-server bin\/keel\.ts start$/);
  const pids = processesOf(launcher!);
  process.kill(npm.process.pid!, 'SIGINT');
  expect(await npm.exited).toEqual({ code: null, signal: 'SIGINT' });
  expect(isAlive(launcher!)).toBe(false);
  await expectAllGone(npm, pids);
});

test('a start whose single sign-on provider does not answer warns and serves', async () => {
  test.setTimeout(120_000);
  const issuer = `http://127.0.0.1:${await freePort()}`;
  const keel = await launch(LAUNCHER, {
    home,
    env: {
      ...env,
      KEEL_OIDC_ISSUER: issuer,
      KEEL_OIDC_CLIENT_ID: 'keel',
      KEEL_OIDC_CLIENT_SECRET: 'keel-client-secret',
      KEEL_OIDC_ROLE_MAP: 'keel-admins=admin',
    },
  });
  expect(keel.output()).toMatch(
    new RegExp(
      `single sign-on: ${issuer}/\\.well-known/openid-configuration did not answer \\(.*\\); ` +
        'checked again at the first sign-in',
    ),
  );
  expectBuildReused(keel);
  process.kill(keel.process.pid!, 'SIGTERM');
  expect(await keel.exited).toEqual({ code: null, signal: 'SIGTERM' });
});
