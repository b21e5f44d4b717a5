#!/usr/bin/env node
// CPU per request: what one page view or API read costs the server process(es) and the
// whole machine (PostgreSQL and the load generator included), from /proc, for a list of
// routes under 10 concurrent clients. Steadier than latency on a shared machine, and it
// sets the floor of the latency: with C cores busy only with this, 10 clients cannot wait
// less than about 10 x (machine CPU per request) / C for an answer.
//
//   KEEL_BENCH_URL=http://127.0.0.1:3160 KEEL_BENCH_USER=bench KEEL_BENCH_PASSWORD=... \
//     node bench/server-cpu.mjs [--requests 400] [--pids 123,124] [route ...]
//
// --pids names the server's HTTP processes (default: every `server.mjs` process, as
// `pgrep -f lib/cli/server.mjs` finds them). Linux only (/proc).
// A figure-printing script, not a test: it asserts nothing and never runs in `npm test`.
import autocannon from 'autocannon';
import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { benchCredentials, machineCpuMs, processCpuMs, signIn } from './http-bench.mjs';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    requests: { type: 'string', default: '400' },
    pids: { type: 'string' },
    connections: { type: 'string', default: '10' },
  },
});
const base = process.env.KEEL_BENCH_URL ?? 'http://127.0.0.1:3160';
const credentials = benchCredentials();
const requests = Number(values.requests);
const connections = Number(values.connections);
const routes =
  positionals.length > 0
    ? positionals
    : [
        '/api/health',
        '/api/executions',
        '/api/settlements/queue',
        '/api/retry-keys',
        '/settlements/bulk',
        '/',
        '/audit',
        '/executions',
        '/settlements',
        '/retry-keys',
      ];

const pids = values.pids
  ? values.pids.split(',').map(Number)
  : execFileSync('pgrep', ['-f', 'lib/cli/server\\.mjs'], { encoding: 'utf8' }).trim().split('\n').map(Number);
// The parent of several HTTP processes only hands connections on; it is counted too.
const serverCpuMs = () => pids.reduce((sum, pid) => sum + processCpuMs(pid), 0);
const cookie = await signIn(base, credentials);

const cores = availableParallelism();
process.stdout.write(
  `${connections} clients, ${requests} requests per route after ${requests / 4} not counted; ` +
    `server pids ${pids.join(',')}; ${cores} cores\n`,
);
process.stdout.write(
  `${'route'.padEnd(28)} ${'server ms/req'.padStart(14)} ${'machine ms/req'.padStart(15)} ` +
    `${'floor p50 ms'.padStart(13)} ${'measured p50'.padStart(13)}\n`,
);
for (const route of routes) {
  const options = { url: `${base}${route}`, connections, headers: { Cookie: cookie } };
  await autocannon({ ...options, amount: requests / 4 });
  const [server, machine] = [serverCpuMs(), machineCpuMs()];
  const result = await autocannon({ ...options, amount: requests });
  const served = result.requests.total;
  const perServer = (serverCpuMs() - server) / served;
  const perMachine = (machineCpuMs() - machine) / served;
  const bad = result.non2xx + result.errors + result.timeouts;
  process.stdout.write(
    `${route.padEnd(28)} ${perServer.toFixed(1).padStart(14)} ${perMachine.toFixed(1).padStart(15)} ` +
      `${((connections * perMachine) / cores).toFixed(0).padStart(13)} ` +
      `${String(result.latency.p50).padStart(13)}${bad ? `  (${bad} failed)` : ''}\n`,
  );
}
