#!/usr/bin/env node
// Read latency of every list API route and page under 10 concurrent clients, first page
// and a deep keyset page, with the filters the UI offers. Prints p50/p95 per route.
//
//   KEEL_BENCH_URL=http://127.0.0.1:3160 KEEL_BENCH_USER=bench KEEL_BENCH_PASSWORD=... \
//     node bench/read-latency.mjs [--seconds 5] [--only substring] [--json out.json] [--kind api|page] \
//       [--floor-p95 ms] [--compare http://127.0.0.1:3161] [--cold] [--warm 20] [--cpu]
//
// Every route gets --warm requests first on every server (not counted; default 2 per client,
// at least 1), so the first routes measured do not pay for loading and compiling the server's
// code; --cold (or --warm 0) skips that. A larger --warm (200, say) runs every route that often first, for a
// server that has seen the whole mix before it is measured.
//
// --compare names a second server (another build on the same database): every route is
// then measured on both, one right after the other, alternating which goes first, so
// the two figures of a row saw the same load on a shared machine. It then prints how many
// routes of each kind are within --growth (default 1.25) of the compared server's figure, by
// p95 and by p50 (this / compared: the 10M console as this, the 1M one compared).
//
// --cpu also reads from /proc, over each route's measured requests, the CPU they cost the
// server's HTTP processes and the whole machine (PostgreSQL and the load generator included),
// per request, as bench/server-cpu.mjs does; with --compare, the growth by those too. Each
// server's processes are found by their command line (`server.mjs start <port>`). CPU per
// request moves far less with the machine's load than latency does. Linux only.
//
// A figure-printing script, not a test: it asserts nothing and never runs in `npm test`.
import autocannon from 'autocannon';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { benchCredentials, machineCpuMs, processCpuMs, signIn } from './http-bench.mjs';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    only: { type: 'string' },
    // `api` or `page`: only that kind of route.
    kind: { type: 'string' },
    json: { type: 'string' },
    connections: { type: 'string', default: '10' },
    compare: { type: 'string' },
    cold: { type: 'boolean', default: false },
    warm: { type: 'string' },
    // The bare framework's 50-row table p95 (ms), from bench/next-floor.mjs in the same session.
    'floor-p95': { type: 'string' },
    cpu: { type: 'boolean', default: false },
    // With --compare: a route "holds" when this / compared is at most this.
    growth: { type: 'string', default: '1.25' },
  },
});
const base = process.env.KEEL_BENCH_URL ?? 'http://127.0.0.1:3160';
const credentials = benchCredentials();
const connections = Number(values.connections);
const seconds = Number(values.seconds);
// autocannon needs at least one request per connection, and reads 0 as "no limit".
const warmRequests = Math.max(Number(values.warm ?? connections * 2), connections);
// Deep pages: this many pages in, following each route's own cursor.
const DEPTH = 10;

const days = (n) => new Date(Date.now() - n * 86_400_000).toISOString();

const API = {
  '/api/executions': [
    '',
    'status=FAILED',
    'status=STARTED',
    'stale=1',
    'job=settle-invoices',
    `updatedFrom=${days(30)}&updatedTo=${days(20)}`,
    'q=123456',
  ],
  '/api/retry-keys': [
    '',
    'phase=read',
    'category=TIMEOUT',
    'phase=write&category=SERIALIZATION',
    'only=keys',
    'only=corrupt',
    'job=import-ledger',
    'job=import-ledger&phase=process',
  ],
  '/api/settlements/queue': [
    '',
    'state=leased',
    'state=retry_scheduled',
    'state=all',
    'reason=rpc',
    'minAttempts=3',
    'maxAttempts=1',
    'minAge=30m',
    'maxAge=10m',
    'q=rcpt_ab',
  ],
  '/api/settlements/dead-letters': [
    '',
    'reason=rpc',
    'reason=invalid_binding',
    'minAttempts=5',
    'minAge=30d',
    'maxAge=2d',
    'q=rcpt_ab',
  ],
  '/api/settlements/dead-letters/groups': ['', 'minAttempts=5', 'maxAge=2d'],
  '/api/metrics': [''],
  '/api/audit': [''],
  '/api/proposals': [''],
  '/api/webhooks/deliveries': [''],
  '/api/users': [''],
  '/api/settlements/bulk-replays': [''],
};
const PAGES = {
  '/': [''],
  '/executions': API['/api/executions'],
  '/retry-keys': ['', 'phase=read', 'category=TIMEOUT', 'phase=write&category=SERIALIZATION', 'job=import-ledger'],
  '/settlements': API['/api/settlements/queue'],
  '/settlements/dead-letters': API['/api/settlements/dead-letters'],
  '/settlements/bulk': [''],
  '/recovery': [''],
  '/audit': [''],
  '/webhooks': [''],
  '/users': [''],
};
// Where each list's next cursor is in its API answer, and which page follows it.
const CURSORS = {
  '/api/executions': { field: 'nextCursor', page: '/executions' },
  '/api/retry-keys': { field: 'nextCursor', page: '/retry-keys' },
  '/api/settlements/queue': { field: 'nextCursor', page: '/settlements' },
  '/api/settlements/dead-letters': { field: 'nextCursor', page: '/settlements/dead-letters' },
};

const withQuery = (path, query) => (query ? `${path}?${query}` : path);

/** The cursor DEPTH pages in, by following the API's own next cursors (null when the list is shorter). */
async function deepCursor(cookie, path, query) {
  let cursor = null;
  for (let i = 0; i < DEPTH; i += 1) {
    const q = [query, cursor ? `cursor=${encodeURIComponent(cursor)}` : ''].filter(Boolean).join('&');
    const response = await fetch(`${base}${withQuery(path, q)}`, { headers: { Cookie: cookie } });
    if (!response.ok) return null;
    const next = (await response.json())[CURSORS[path].field];
    if (!next) return cursor;
    cursor = next;
  }
  return cursor;
}

/** The HTTP processes serving a base URL, by their command line (the parent of several is counted too). */
function serverPids(url) {
  const port = new URL(url).port;
  const found = execFileSync('pgrep', ['-f', `server\\.mjs start ${port}$`], { encoding: 'utf8' }).trim();
  return found.split('\n').map(Number);
}
const serverCpuMs = (pids) => pids.reduce((sum, pid) => sum + processCpuMs(pid), 0);

async function measure({ base, cookie, pids }, url) {
  // One request first: a route slower than a second gets a fixed number of requests, so a run ends.
  const started = performance.now();
  const probe = await fetch(`${base}${url}`, { headers: { Cookie: cookie }, redirect: 'manual' });
  await probe.arrayBuffer();
  const single = performance.now() - started;
  const budget = single > 1000 ? { amount: connections * 2 } : { duration: seconds };
  // autocannon's summary has p90 and p97.5 but no p95: keep every response time and rank them.
  const times = [];
  const cpuBefore = pids && [serverCpuMs(pids), machineCpuMs()];
  const run = autocannon({ url: `${base}${url}`, connections, headers: { Cookie: cookie }, ...budget });
  run.on('response', (_client, _status, _bytes, responseTime) => times.push(responseTime));
  const result = await run;
  const cpu = cpuBefore && {
    serverMs: round1((serverCpuMs(pids) - cpuBefore[0]) / Math.max(1, times.length)),
    machineMs: round1((machineCpuMs() - cpuBefore[1]) / Math.max(1, times.length)),
  };
  times.sort((a, b) => a - b);
  const rank = (p) =>
    times.length ? Math.round(times[Math.min(times.length - 1, Math.ceil(p * times.length) - 1)]) : null;
  const bad = result.non2xx + result.errors + result.timeouts;
  return { url, status: probe.status, requests: times.length, p50: rank(0.5), p95: rank(0.95), bad, ...cpu };
}
const round1 = (n) => Math.round(n * 10) / 10;

const cookie = await signIn(base, credentials);
const servers = [{ name: 'this', base, cookie }];
if (values.compare)
  servers.unshift({ name: 'compared', base: values.compare, cookie: await signIn(values.compare, credentials) });
if (values.cpu) for (const server of servers) server.pids = serverPids(server.base);
const targets = [];
for (const [path, queries] of Object.entries(API))
  for (const q of queries) targets.push({ kind: 'api', path, url: withQuery(path, q), query: q });
for (const [path, queries] of Object.entries(PAGES))
  for (const q of queries) targets.push({ kind: 'page', path, url: withQuery(path, q), query: q });
for (const [path, { page }] of Object.entries(CURSORS)) {
  for (const q of API[path]) {
    process.stderr.write(`following ${path}?${q} ${DEPTH} pages in\n`);
    const cursor = await deepCursor(cookie, path, q);
    if (!cursor) continue;
    const deep = [q, `cursor=${encodeURIComponent(cursor)}`].filter(Boolean).join('&');
    targets.push({ kind: 'api', path, url: withQuery(path, deep), query: `${q} (page ${DEPTH + 1})`, deep: true });
    if (PAGES[page]?.includes(q))
      targets.push({
        kind: 'page',
        path: page,
        url: withQuery(page, deep),
        query: `${q} (page ${DEPTH + 1})`,
        deep: true,
      });
  }
}

const measured = targets.filter(
  (t) => (!values.only || t.url.includes(values.only)) && (!values.kind || t.kind === values.kind),
);
if (!values.cold && values.warm !== '0') {
  process.stderr.write(`warming ${measured.length} routes, ${warmRequests} requests each\n`);
  for (const target of measured) {
    for (const server of servers) {
      await autocannon({
        url: `${server.base}${target.url}`,
        connections,
        headers: { Cookie: server.cookie },
        amount: warmRequests,
      });
    }
  }
}

const rows = [];
const warmUp =
  values.cold || values.warm === '0' ? 'no warm-up' : `after a warm-up of ${warmRequests} requests per route`;
process.stdout.write(
  `${connections} clients, ${seconds} s per route (2 requests per client when one takes over 1 s), ${warmUp}, ` +
    `${servers.map((s) => `${s.name} ${s.base}`).join(' then ')}\n`,
);
process.stdout.write(
  `${'kind'.padEnd(5)} ${servers.map((s) => `${s.name} p50 / p95 (reqs)`.padStart(28)).join(' ')}  route\n`,
);
const shown = (f) =>
  `${f.p50} / ${f.p95} (${f.requests}${f.bad ? `, ${f.bad} failed, first status ${f.status}` : ''})` +
  (f.serverMs !== undefined ? ` ${f.serverMs}/${f.machineMs} ms` : '');
for (const [i, target] of measured.entries()) {
  // Alternate which server goes first, so neither always meets the other's leftovers.
  const order = i % 2 === 0 ? servers : [...servers].reverse();
  const figures = {};
  for (const server of order) figures[server.name] = await measure(server, target.url);
  const row = { ...target, ...figures.this, ...(values.compare ? { compared: figures.compared } : {}) };
  rows.push(row);
  process.stdout.write(
    `${target.kind.padEnd(5)} ${servers.map((s) => shown(figures[s.name]).padStart(28)).join(' ')}  ` +
      `${target.path}${target.query ? ` ?${target.query}` : ''}\n`,
  );
}
const worst = (kind, pick) => Math.max(...rows.filter((r) => r.kind === kind).map((r) => pick(r).p95));
for (const server of servers) {
  const pick = server.name === 'this' ? (r) => r : (r) => r.compared;
  process.stdout.write(
    `worst p95 (${server.name}): api ${worst('api', pick)} ms (goal 100), pages ${worst('page', pick)} ms (goal 150)\n`,
  );
}
if (values.compare) {
  const limit = Number(values.growth);
  const measures = [
    ['p95', (f) => f.p95],
    ['p50', (f) => f.p50],
    ...(values.cpu
      ? [
          ['server CPU per request', (f) => f.serverMs],
          ['machine CPU per request', (f) => f.machineMs],
        ]
      : []),
  ];
  for (const kind of ['api', 'page']) {
    const of = rows.filter((r) => r.kind === kind);
    if (of.length === 0) continue;
    for (const [name, pick] of measures) {
      const ratios = of.map((r) => ({ r, ratio: pick(r) / pick(r.compared) })).sort((a, b) => a.ratio - b.ratio);
      const held = ratios.filter(({ ratio }) => ratio <= limit).length;
      const median = ratios[Math.floor(ratios.length / 2)].ratio;
      const over = ratios.filter(({ ratio }) => ratio > limit).reverse();
      process.stdout.write(
        `${kind} by ${name}: ${held} of ${of.length} within ${limit}x of the compared server (median ` +
          `${median.toFixed(2)}x)${over.length ? '; over:' : ''}\n`,
      );
      for (const { r, ratio } of over)
        process.stdout.write(`  ${ratio.toFixed(2)}x  ${r.path}${r.query ? ` ?${r.query}` : ''}\n`);
    }
  }
}
if (values['floor-p95']) {
  const floor = Number(values['floor-p95']);
  const pages = rows.filter((r) => r.kind === 'page');
  const ratios = pages.map((r) => r.p95 / floor).sort((a, b) => a - b);
  const within = ratios.filter((ratio) => ratio <= 1.5).length;
  const at = (q) => ratios[Math.min(ratios.length - 1, Math.floor(q * ratios.length))]?.toFixed(2);
  process.stdout.write(
    `pages against the framework table's p95 of ${floor} ms: ${within} of ${pages.length} within 1.5x ` +
      `(median ${at(0.5)}x, worst ${at(1)}x)\n`,
  );
  for (const r of pages.filter((p) => p.p95 / floor > 1.5).sort((a, b) => b.p95 - a.p95))
    process.stdout.write(`  ${(r.p95 / floor).toFixed(2)}x  ${r.p95} ms  ${r.path}${r.query ? ` ?${r.query}` : ''}\n`);
}
if (values.json) writeFileSync(values.json, JSON.stringify(rows, null, 2));
