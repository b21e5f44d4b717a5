import { expect, test } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { ownKeelInstance, type KeelInstance } from './support/replica-cluster';
import { DEMO_PASSWORD, sessionCookie } from './support/session';

/**
 * One Keel server with two HTTP processes on its port (KEEL_HTTP_PROCESSES=2,
 * docs/deployment.md): connections are shared between them, a session works on both,
 * a metrics scrape reports both processes' counters whichever answers it, the
 * background work runs once, a killed process is replaced, and a stop ends them all.
 */

test.describe.configure({ mode: 'serial' });

const own = ownKeelInstance(test, 'keel-p', { KEEL_HTTP_PROCESSES: '2' });
let keel: KeelInstance;
let cookie = '';

test.beforeAll(async () => {
  keel = own.instance();
  cookie = await sessionCookie('viewer', DEMO_PASSWORD, keel.url);
});

/** A GET on a connection of its own: the cluster hands each new connection to the next process. */
function getFresh(path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${keel.url}${path}`,
      { agent: false, headers: { Cookie: cookie, Connection: 'close' } },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** The value of one metric line, or null when the scrape has no such line. */
const metric = (body: string, line: string): number | null => {
  const found = body.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? null : Number(found.slice(line.length + 1));
};

/** The pids of the HTTP processes: the children of the server's parent process under the launcher. */
function httpProcessPids(): number[] {
  // The launcher's other children (its TypeScript loader's esbuild service) are not the server.
  const parent = execFileSync('pgrep', ['-P', String(keel.launcher.pid), '-f', 'server\\.mjs'])
    .toString()
    .trim()
    .split('\n')
    .filter(Boolean);
  expect(parent).toHaveLength(1);
  try {
    return execFileSync('pgrep', ['-P', parent[0]!, '-f', 'server\\.mjs'])
      .toString()
      .trim()
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return []; // pgrep exits 1 when the parent has no children
  }
}

test('two processes serve the port; the background work runs in one of them', async () => {
  expect(httpProcessPids()).toHaveLength(2);
  // The port answers once the first process listens; the second may still be starting.
  await expect.poll(() => ['0', '1'].every((i) => keel.output().includes(`(HTTP process ${i})`))).toBe(true);
  await expect.poll(() => keel.output().match(/bulk replay worker started/g)?.length).toBe(1);
  await expect.poll(() => keel.output().match(/metric sampler started/g)?.length).toBe(1);
  await expect.poll(() => keel.output().match(/proposal expiry started/g)?.length).toBe(1);
  const out = keel.output();
  expect(out.match(/metric sampler started/g)).toHaveLength(1);
  expect(out.match(/bulk replay worker started/g)).toHaveLength(1);
  expect(out.match(/proposal expiry started/g)).toHaveLength(1);
  // Each process names itself after the instance: keel-p-1 works the bulk jobs.
  expect(out).toMatch(/"instance":"keel-p-1"/);
});

test('a session and the counters hold across both processes', async () => {
  const requests = 12;
  for (let i = 0; i < requests; i += 1) {
    const answer = await getFresh('/api/executions');
    expect(answer.status).toBe(200);
  }
  const line = 'keel_api_request_duration_seconds_count{route="/api/executions",method="GET",status="200"}';
  // Consecutive scrapes, each on a connection of its own, so both processes answer one:
  // each reports the requests of both.
  for (let i = 0; i < 4; i += 1) {
    const scrape = await getFresh('/api/metrics');
    expect(scrape.status).toBe(200);
    expect(metric(scrape.body, 'keel_http_processes')).toBe(2);
    expect(metric(scrape.body, line)).toBe(requests);
  }
});

test('a process that dies is replaced, and the port keeps answering', async () => {
  const before = httpProcessPids();
  const victim = before[0]!;
  process.kill(victim, 'SIGKILL');
  await expect.poll(() => keel.output()).toContain('exited (SIGKILL); starting another');
  await expect.poll(() => httpProcessPids().filter((pid) => pid !== victim)).toHaveLength(2);
  // Every connection is answered meanwhile and after: the survivor takes them until the new one listens.
  await expect
    .poll(async () => {
      const scrape = await getFresh('/api/metrics');
      return scrape.status === 200 ? metric(scrape.body, 'keel_http_processes') : scrape.status;
    })
    .toBe(2);
  for (let i = 0; i < 4; i += 1) expect((await getFresh('/api/executions')).status).toBe(200);
});

test('stopping the server stops every process', async () => {
  const pids = httpProcessPids();
  await keel.stop();
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  await expect.poll(() => pids.filter(alive)).toEqual([]);
});
