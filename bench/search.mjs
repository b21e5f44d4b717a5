#!/usr/bin/env node
// Latency of GET /api/search for each kind of id, under 10 concurrent clients, beside a floor
// measured in the same run: /api/job-names (the same session check and wrapper, one tiny
// read) and /api/health. Prints p50/p95 per kind, the ratio of each p95 to the floor's, and
// the load average before and after each row.
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/keel_scale \
//   KEEL_BENCH_URL=http://127.0.0.1:3160 KEEL_BENCH_USER=bench KEEL_BENCH_PASSWORD=... \
//     node bench/search.mjs [--seconds 5] [--connections 10] [--samples 200] [--prepare] [--json out.json]
//
// Each kind cycles through --samples different ids read from the database (so a run is not
// one cached row); --prepare first adds the proposals, operation ids and settlement history
// `keel load-scale` does not make (bench/search-samples.mjs). The bench user should be an
// admin, so usernames are searched too. Run it with nothing else busy on the machine.
// A figure-printing script, not a test: it asserts nothing and never runs in `npm test`.
import autocannon from 'autocannon';
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { benchCredentials, signIn } from './http-bench.mjs';
import { prepareSearchRows, searchSamples } from './search-samples.mjs';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '10' },
    samples: { type: 'string', default: '200' },
    prepare: { type: 'boolean', default: false },
    json: { type: 'string' },
  },
});
const base = process.env.KEEL_BENCH_URL ?? 'http://127.0.0.1:3160';
const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  process.stderr.write('set DATABASE_URL to the database the server reads (the search texts come from it)\n');
  process.exit(2);
}
const credentials = benchCredentials();
const connections = Number(values.connections);
const seconds = Number(values.seconds);

const client = new pg.Client({ connectionString: databaseUrl });
await client.connect();
if (values.prepare)
  process.stderr.write(`bench rows added to: ${(await prepareSearchRows(client)).join(', ') || 'none (all there)'}\n`);
const samples = await searchSamples(client, { count: Number(values.samples), username: credentials.username });
const sizes = (
  await client.query(`select (select reltuples::bigint from pg_class
                      where oid = 'oxide_batch.ob_job_execution'::regclass) as executions,
  (select reltuples::bigint from pg_class where oid = 'settle.attempts'::regclass) as attempts`)
).rows[0];
await client.end();

const cookie = await signIn(base, credentials);
const load = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');

/** Every response time of `paths`, cycled across the clients for the given time. */
async function measure(paths) {
  let next = 0;
  const times = [];
  const statuses = new Map();
  const run = autocannon({
    url: base,
    connections,
    duration: seconds,
    headers: { Cookie: cookie },
    requests: [{ setupRequest: (request) => ({ ...request, path: paths[next++ % paths.length] }) }],
  });
  run.on('response', (_client, status, _bytes, responseTime) => {
    times.push(responseTime);
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
  });
  const result = await run;
  times.sort((a, b) => a - b);
  const rank = (p) =>
    times.length ? Number(times[Math.min(times.length - 1, Math.ceil(p * times.length) - 1)].toFixed(1)) : null;
  const bad =
    [...statuses].filter(([status]) => status !== 200).reduce((n, [, count]) => n + count, 0) +
    result.errors +
    result.timeouts;
  return { requests: times.length, p50: rank(0.5), p95: rank(0.95), bad };
}

const searchPath = (q) => `/api/search?${new URLSearchParams({ q })}`;
const targets = [
  { name: 'floor: /api/job-names', paths: ['/api/job-names'] },
  { name: 'floor: /api/health', paths: ['/api/health'] },
  ...Object.entries(samples).map(([kind, texts]) => ({ name: kind, paths: texts.map(searchPath) })),
];

// Warm every target (not counted), so the first rows do not pay for loading the server's code.
for (const target of targets) {
  for (const path of target.paths.slice(0, connections * 2))
    await (await fetch(`${base}${path}`, { headers: { Cookie: cookie } })).arrayBuffer();
}

const rows = [];
process.stdout.write(
  `${sizes.executions} executions, ${sizes.attempts} settlement attempts; ${connections} clients, ${seconds} s per ` +
    `row\n\n`,
);
process.stdout.write(
  `${'what'.padEnd(28)} ${'ids'.padStart(4)} ${'requests'.padStart(8)} ${'p50 ms'.padStart(7)} ` +
    `${'p95 ms'.padStart(7)} ${'p95/floor'.padStart(9)}  load before -> after\n`,
);
let floor = null;
for (const target of targets) {
  const before = load();
  const figures = await measure(target.paths);
  const after = load();
  if (target.name === 'floor: /api/job-names') floor = figures.p95;
  const ratio = floor && figures.p95 !== null ? (figures.p95 / floor).toFixed(2) : '';
  rows.push({
    name: target.name,
    ids: target.paths.length,
    ...figures,
    ratioToFloor: ratio ? Number(ratio) : null,
    loadBefore: before,
    loadAfter: after,
  });
  process.stdout.write(
    `${target.name.padEnd(28)} ${String(target.paths.length).padStart(4)} ${String(figures.requests).padStart(8)} ` +
      `${String(figures.p50).padStart(7)} ${String(figures.p95).padStart(7)} ${ratio.padStart(9)}  ${before} -> ` +
      `${after}${figures.bad ? `  (${figures.bad} failed)` : ''}\n`,
  );
}
if (values.json) writeFileSync(values.json, JSON.stringify({ base, connections, seconds, sizes, rows }, null, 2));
