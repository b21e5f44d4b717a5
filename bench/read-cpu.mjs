#!/usr/bin/env node
// Server CPU per request for every list API route and first page, on two Keel servers over
// the same database, route by route: a shared machine's load moves wall-clock latency
// several-fold, while the CPU a request costs the Node process barely moves.
//
//   KEEL_BENCH_USER=bench KEEL_BENCH_PASSWORD=... node bench/read-cpu.mjs \
//     --server this=http://127.0.0.1:3160 --server compared=http://127.0.0.1:3161 [--requests 10] [--only substring]
//
// Each server's process is found by its listening port (ss) and read from /proc (Linux
// only). Requests are sequential, so the figure is one request's CPU with nothing queued;
// the database's side is in bench/explain-lists.ts. A figure-printing script, not a test.
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { benchCredentials, processCpuMs, signIn } from './http-bench.mjs';

const { values } = parseArgs({
  options: {
    server: { type: 'string', multiple: true },
    requests: { type: 'string', default: '10' },
    only: { type: 'string' },
  },
});
if (!values.server?.length) {
  process.stderr.write('pass --server name=url (once or twice)\n');
  process.exit(2);
}
const credentials = benchCredentials();
const requests = Number(values.requests);

/** The pid listening on the url's port. */
function listener(url) {
  const port = new URL(url).port;
  const out = execFileSync('ss', ['-ltnpH', `sport = :${port}`], { encoding: 'utf8' });
  const pid = /pid=(\d+)/.exec(out)?.[1];
  if (!pid) throw new Error(`nothing listens on ${port}`);
  return Number(pid);
}

const servers = [];
for (const spec of values.server) {
  const [name, base] = spec.split('=');
  servers.push({ name, base, pid: listener(base), cookie: await signIn(base, credentials) });
}

const days = (n) => new Date(Date.now() - n * 86_400_000).toISOString();
const ROUTES = [
  ...[
    '',
    'status=FAILED',
    'stale=1',
    'job=settle-invoices',
    `updatedFrom=${days(30)}&updatedTo=${days(20)}`,
    'q=123456',
  ].flatMap((q) => [`/api/executions?${q}`, `/executions?${q}`]),
  ...['', 'phase=read', 'phase=write&category=SERIALIZATION', 'only=corrupt', 'job=import-ledger&phase=process'].map(
    (q) => `/api/retry-keys?${q}`,
  ),
  ...['', 'phase=read', 'job=import-ledger'].map((q) => `/retry-keys?${q}`),
  ...[
    '',
    'state=leased',
    'state=all',
    'reason=rpc',
    'minAttempts=3',
    'maxAttempts=1',
    'minAge=30m',
    'maxAge=10m',
    'q=rcpt_ab',
  ].flatMap((q) => [`/api/settlements/queue?${q}`, `/settlements?${q}`]),
  ...['', 'reason=rpc', 'minAttempts=5', 'minAge=30d', 'q=rcpt_ab'].flatMap((q) => [
    `/api/settlements/dead-letters?${q}`,
    `/settlements/dead-letters?${q}`,
  ]),
  ...['', 'minAttempts=5'].map((q) => `/api/settlements/dead-letters/groups?${q}`),
  '/api/metrics',
  '/',
  '/api/settlements/bulk-replays',
].map((u) => u.replace(/\?$/, ''));

async function measure(server, url) {
  await (await fetch(`${server.base}${url}`, { headers: { Cookie: server.cookie } })).arrayBuffer(); // warm
  const before = processCpuMs(server.pid);
  const walls = [];
  for (let i = 0; i < requests; i += 1) {
    const started = performance.now();
    const response = await fetch(`${server.base}${url}`, { headers: { Cookie: server.cookie } });
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`${url}: ${response.status}`);
    walls.push(performance.now() - started);
  }
  walls.sort((a, b) => a - b);
  return { cpu: (processCpuMs(server.pid) - before) / requests, wall: walls[Math.floor(walls.length / 2)] };
}

process.stdout.write(
  `${requests} sequential requests per route; CPU ms per request of the server process, then median wall ms\n`,
);
process.stdout.write(`${servers.map((s) => `${s.name} cpu / wall`.padStart(22)).join(' ')}  route\n`);
const rows = [];
for (const [i, url] of ROUTES.filter((u) => !values.only || u.includes(values.only)).entries()) {
  const order = i % 2 === 0 ? servers : [...servers].reverse();
  const figures = {};
  for (const server of order) figures[server.name] = await measure(server, url);
  rows.push({ url, ...figures });
  const cells = servers.map((s) => `${figures[s.name].cpu.toFixed(1)} / ${figures[s.name].wall.toFixed(0)}`);
  process.stdout.write(`${cells.map((cell) => cell.padStart(22)).join(' ')}  ${url}\n`);
}
for (const s of servers) {
  const cpu = rows.reduce((a, r) => a + r[s.name].cpu, 0);
  process.stdout.write(
    `${s.name}: ${cpu.toFixed(0)} ms of server CPU for one request to each of ${rows.length} routes\n`,
  );
}
