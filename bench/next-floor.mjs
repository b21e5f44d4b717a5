#!/usr/bin/env node
// What Next.js costs before any of Keel's code: a scratch app holding only minimal pages,
// built with Keel's own dependencies (the same next, react, @tanstack/react-query and
// nuqs), measured the way Keel's pages are.
//
//   node bench/next-floor.mjs [--seconds 4] [--rounds 2] [--port 3190] [--keep]
//
// Prints first-load JavaScript per page (scripts/bundle-budget.mjs on the scratch build),
// then p50 / p95 and server CPU per request of two dynamic pages under 10 clients
// (autocannon, as bench/read-latency.mjs and bench/server-cpu.mjs do):
//
//   /link        a nested layout and a client component with one next/link Link
//   /query       the same, with TanStack Query's provider and one useQuery
//   /query-url   the same, with nuqs' adapter and one useQueryStates
//   /empty       a dynamic page rendering one <p> (no data, no client code)
//   /table       a dynamic page rendering a 50-row, 7-column table of server components
//                from memory (no database, no session, no client code)
//   /query-table the same rows as a console list page carries them: read on the server into
//                TanStack Query, dehydrated, rendered by a client view under nuqs' adapter
//                (no database, no session)
//
// The scratch app lives in a `.next-floor-*` folder of the checkout, which git ignores, and is
// removed at the end unless --keep; it resolves Keel's node_modules from there. A figure-printing script, not a
// test: it asserts nothing and never runs in `npm test`. Linux only (/proc).
import autocannon from 'autocannon';
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { processCpuMs } from './http-bench.mjs';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '2' },
    port: { type: 'string', default: '3190' },
    keep: { type: 'boolean', default: false },
  },
});
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const nextBin = join(root, 'node_modules', 'next', 'dist', 'bin', 'next');
// Inside the checkout (git ignores it): Turbopack resolves packages only under the workspace root.
const app = mkdtempSync(join(root, '.next-floor-'));
const connections = 10;

const files = {
  'package.json': JSON.stringify({ name: 'next-floor', private: true, type: 'module' }),
  'next.config.mjs': 'export default { reactStrictMode: true, poweredByHeader: false };\n',
  // Every page renders per request, as every Keel page does (its root layout reads cookies).
  'app/layout.jsx': `import { connection } from 'next/server';
export default async function RootLayout({ children }) {
  await connection();
  return <html lang="en"><body>{children}</body></html>;
}
`,
  // Nested layouts, as every console page sits under the console layout.
  'app/(link)/layout.jsx': `export default function Layout({ children }) { return <main>{children}</main>; }
`,
  'app/(link)/link/view.jsx': `'use client';
import Link from 'next/link';
import { useState } from 'react';
export function View() {
  const [n, setN] = useState(0);
  return <div><button onClick={() => setN(n + 1)}>{n}</button><Link href="/empty">empty</Link></div>;
}
`,
  'app/(link)/link/page.jsx': `import { View } from './view';
export default function Page() { return <View />; }
`,
  'app/(query)/providers.jsx': `'use client';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { useState } from 'react';
export function Providers({ children }) {
  const [client] = useState(() => new QueryClient());
  return <QueryClientProvider client={client}>{children}</QueryClientProvider>;
}
`,
  'app/(query)/layout.jsx': `import { Providers } from './providers';
export default function Layout({ children }) { return <main><Providers>{children}</Providers></main>; }
`,
  'app/(query)/query/view.jsx': `'use client';
import Link from 'next/link';
import { useQuery } from '@tanstack/react-query';
export function View() {
  const answer = useQuery({
    queryKey: ['time'],
    queryFn: () => fetch('/empty').then((r) => r.status),
    refetchInterval: 5000,
  });
  return <div><p>{String(answer.data)}</p><Link href="/empty">empty</Link></div>;
}
`,
  'app/(query)/query/page.jsx': `import { View } from './view';
export default function Page() { return <View />; }
`,
  'app/(query-url)/providers.jsx': `'use client';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { NuqsAdapter } from 'nuqs/adapters/next/app';
import { useState } from 'react';
export function Providers({ children }) {
  const [client] = useState(() => new QueryClient());
  return <NuqsAdapter><QueryClientProvider client={client}>{children}</QueryClientProvider></NuqsAdapter>;
}
`,
  'app/(query-url)/layout.jsx': `import { Providers } from './providers';
export default function Layout({ children }) { return <main><Providers>{children}</Providers></main>; }
`,
  'app/(query-url)/query-url/view.jsx': `'use client';
import Link from 'next/link';
import { useQuery } from '@tanstack/react-query';
import { parseAsString, useQueryStates } from 'nuqs';
export function View() {
  const [filters, setFilters] = useQueryStates({ status: parseAsString.withDefault('') });
  const answer = useQuery({
    queryKey: ['time', filters.status],
    queryFn: () => fetch('/empty').then((r) => r.status),
    refetchInterval: 5000,
  });
  return (
    <div>
      <button onClick={() => setFilters({ status: 'FAILED' })}>{filters.status}</button>
      <p>{String(answer.data)}</p>
      <Link href="/empty">empty</Link>
    </div>
  );
}
`,
  'app/(query-url)/query-url/page.jsx': `import { View } from './view';
export default function Page() { return <View />; }
`,
  // The shape of a console list page: the same 50 rows read on the server into a QueryClient,
  // dehydrated into a HydrationBoundary and rendered by a client view that reads them with
  // useQuery under a nuqs filter (so the rows travel in the HTML and again in the RSC payload).
  'app/(query-url)/query-table/rows.js': `const STATUSES = ['COMPLETED', 'FAILED', 'STARTED', 'STOPPED'];
const JOBS = ['rebuild-search-index', 'export-statements', 'settle-invoices'];
export function rows(now) {
  return Array.from({ length: 50 }, (_, i) => ({
    id: 1_000_000 - i,
    job: JOBS[i % 3],
    status: STATUSES[i % 4],
    attempt: 1 + (i % 2),
    updatedAt: new Date(now - i * 7_000).toISOString(),
  }));
}
`,
  'app/(query-url)/query-table/view.jsx': `'use client';
import { useQuery } from '@tanstack/react-query';
import { parseAsString, useQueryStates } from 'nuqs';
const cell = 'px-3 py-2 whitespace-nowrap';
export function View() {
  const [filters] = useQueryStates({ status: parseAsString.withDefault('') });
  const list = useQuery({
    queryKey: ['rows', filters.status],
    queryFn: () => fetch('/empty').then(() => []),
    staleTime: 5000,
  });
  const now = Date.now();
  return (
    <table className="min-w-full text-left text-sm">
      <caption className="sr-only">Executions</caption>
      <thead>
        <tr>
          {['Execution', 'Job', 'Status', 'Attempt', 'Version', 'Owner', 'Updated'].map((h) => (
            <th key={h} scope="col" className="px-3 py-2 font-medium">{h}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {(list.data ?? []).map((r) => (
          <tr key={r.id}>
            <td className={cell + ' font-mono text-xs'}>
              <a className="text-sky-800 underline" href={'/executions/' + r.id}>{r.id}</a>
            </td>
            <td className={cell}>{r.job}</td>
            <td className={cell}>
              <span className="inline-block rounded px-1.5 py-0.5 text-xs font-medium">{r.status}</span>
            </td>
            <td className={cell}>{r.attempt}</td>
            <td className={cell}>3</td>
            <td className={cell}>none</td>
            <td className={cell}>
              <time dateTime={r.updatedAt} title={r.updatedAt}>
                {Math.round((now - Date.parse(r.updatedAt)) / 60000)} min ago{' '}
                <span className="text-zinc-500">· {r.updatedAt}</span>
              </time>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
`,
  'app/(query-url)/query-table/page.jsx': `import {
  dehydrate,
  HydrationBoundary,
  QueryClient,
} from '@tanstack/react-query';
import { connection } from 'next/server';
import { rows } from './rows';
import { View } from './view';
export default async function Page() {
  await connection();
  const client = new QueryClient();
  await client.prefetchQuery({ queryKey: ['rows', ''], queryFn: async () => rows(Date.now()) });
  return <HydrationBoundary state={dehydrate(client)}><View /></HydrationBoundary>;
}
`,
  'app/empty/page.jsx': `import { connection } from 'next/server';
export default async function Page() { await connection(); return <main><p>nothing</p></main>; }
`,
  // The shape of the executions list: 50 rows, a link, a badge and a time per row.
  'app/table/page.jsx': `import { connection } from 'next/server';
const STATUSES = ['COMPLETED', 'FAILED', 'STARTED', 'STOPPED'];
const JOBS = ['rebuild-search-index', 'export-statements', 'settle-invoices'];
const cell = 'px-3 py-2 whitespace-nowrap';
export default async function Page() {
  await connection();
  const now = Date.now();
  const rows = Array.from({ length: 50 }, (_, i) => ({
    id: 1_000_000 - i,
    job: JOBS[i % 3],
    status: STATUSES[i % 4],
    attempt: 1 + (i % 2),
    updated: new Date(now - i * 7_000),
  }));
  return (
    <main>
      <table className="min-w-full text-left text-sm">
        <caption className="sr-only">Executions</caption>
        <thead>
          <tr>
            {['Execution', 'Job', 'Status', 'Attempt', 'Version', 'Owner', 'Updated'].map((h) => (
              <th key={h} scope="col" className="px-3 py-2 font-medium">{h}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.id}>
              <td className={cell + ' font-mono text-xs'}>
                <a className="text-sky-800 underline" href={'/executions/' + r.id}>{r.id}</a>
              </td>
              <td className={cell}>{r.job}</td>
              <td className={cell}>
                <span className="inline-block rounded px-1.5 py-0.5 text-xs font-medium">{r.status}</span>
              </td>
              <td className={cell}>{r.attempt}</td>
              <td className={cell}>3</td>
              <td className={cell}>none</td>
              <td className={cell}>
                <time dateTime={r.updated.toISOString()} title={r.updated.toISOString()}>
                  {Math.round((now - r.updated.getTime()) / 60000)} min ago{' '}
                  <span className="text-zinc-500">· {r.updated.toISOString()}</span>
                </time>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </main>
  );
}
`,
};

function writeApp() {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(app, path)), { recursive: true });
    writeFileSync(join(app, path), text);
  }
}

/** The PID of the process listening on the port: `next start` serves from a child of the CLI. */
function listenerPid(port) {
  const out = execFileSync('ss', ['-Hltnp', `sport = :${port}`], { encoding: 'utf8' });
  const pid = /pid=(\d+)/.exec(out)?.[1];
  if (!pid) throw new Error(`nothing listens on ${port}`);
  return Number(pid);
}

async function waitForServer(base) {
  for (;;) {
    try {
      if ((await fetch(`${base}/empty`)).ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((done) => setTimeout(done, 250));
  }
}

async function measure(base, pid, route, seconds) {
  await autocannon({ url: `${base}${route}`, connections, amount: connections * 20 });
  const times = [];
  const cpuBefore = processCpuMs(pid);
  const run = autocannon({ url: `${base}${route}`, connections, duration: seconds });
  run.on('response', (_client, _status, _bytes, responseTime) => times.push(responseTime));
  const result = await run;
  const cpuMs = processCpuMs(pid) - cpuBefore;
  times.sort((a, b) => a - b);
  const rank = (p) => Math.round(times[Math.min(times.length - 1, Math.ceil(p * times.length) - 1)]);
  return {
    p50: rank(0.5),
    p95: rank(0.95),
    requests: times.length,
    failed: result.non2xx + result.errors + result.timeouts,
    cpu: cpuMs / times.length,
  };
}

let server;
try {
  writeApp();
  process.stdout.write(`scratch app in ${app}; building with ${join(root, 'node_modules', 'next')}\n`);
  execFileSync(process.execPath, [nextBin, 'build'], {
    cwd: app,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' },
  });
  try {
    execFileSync(
      process.execPath,
      [join(root, 'scripts', 'bundle-budget.mjs'), '--dir', join(app, '.next'), '--budget', '150'],
      { stdio: 'inherit' },
    );
  } catch {
    // bundle-budget exits 1 when a page passes the budget: that is a figure here, not a failure.
  }

  const port = values.port;
  const base = `http://127.0.0.1:${port}`;
  server = spawn(process.execPath, [nextBin, 'start', '-p', port, '-H', '127.0.0.1'], {
    cwd: app,
    stdio: 'ignore',
    env: { ...process.env, NODE_ENV: 'production', NEXT_TELEMETRY_DISABLED: '1' },
  });
  await waitForServer(base);
  const pid = listenerPid(port);
  process.stdout.write(
    `\n${connections} clients, ${values.seconds} s per route, ${values.rounds} rounds; server pid ${pid}\n`,
  );
  process.stdout.write(
    `${'route'.padEnd(12)} ${'p50 ms'.padStart(7)} ${'p95 ms'.padStart(7)} ${'server ms/req'.padStart(14)} ` +
      `${'requests'.padStart(9)}\n`,
  );
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const route of ['/empty', '/table', '/query-table']) {
      const f = await measure(base, pid, route, Number(values.seconds));
      process.stdout.write(
        `${route.padEnd(12)} ${String(f.p50).padStart(7)} ${String(f.p95).padStart(7)} ` +
          `${f.cpu.toFixed(1).padStart(14)} ` +
          `${String(f.requests).padStart(9)}${f.failed ? `  ${f.failed} failed` : ''}\n`,
      );
    }
  }
} finally {
  server?.kill('SIGTERM');
  if (!values.keep) rmSync(app, { recursive: true, force: true });
}
