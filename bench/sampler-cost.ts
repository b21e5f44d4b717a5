// What one metric sample costs on a database of this size, and what the sampler takes of the
// machine with it: at a fixed 15 s interval, and at the interval the sample sets
// (lib/workers/metric-sampler.ts: a sample takes at most a tenth of the time between two).
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/keel_scale \
//     node --import tsx --conditions=react-server bench/sampler-cost.ts [--samples 5]
//
// Each sample goes through sampleMetrics, as the running server's sampler takes it, and is
// deleted again so that the next is not refused as recent: run it on a bench database. Machine
// CPU (/proc/stat: PostgreSQL's parallel workers included) is read around each sample, so run it
// alone (`heavy --alone`). Figures, not a test.
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createDatabase } from '../lib/db/client';
import { METRICS } from '../lib/observability/metric-catalogue';
import { METRIC_SAMPLE_INTERVAL_MS, sampleMetrics } from '../lib/workers/metric-sampler';
import { machineCpuMs } from './http-bench.mjs';

const { values } = parseArgs({ options: { samples: { type: 'string', default: '5' } } });
const samples = Math.max(1, Number(values.samples));
const url = process.env.DATABASE_URL;
if (!url) throw new Error('DATABASE_URL names the bench database');
const pool = new pg.Pool({ connectionString: url, max: 1 });
const db = createDatabase(pool);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const taken: { wallMs: number; cpuMs: number; intervalMs: number }[] = [];
for (let i = 0; i < samples; i += 1) {
  const cpu = machineCpuMs();
  const start = performance.now();
  const sampled = await sampleMetrics(db, { staleThresholdMs: 900_000 });
  const wallMs = performance.now() - start;
  const cpuMs = machineCpuMs() - cpu;
  if (!sampled) throw new Error('another process sampled: stop the console on this database first');
  await pool.query(
    `delete from keel.metric_sample where sampled_at = (select max(sampled_at) from keel.metric_sample
     where metric = $1)`,
    [METRICS.sampleIntervalSeconds],
  );
  taken.push({ wallMs, cpuMs, intervalMs: sampled.intervalMs });
  process.stdout.write(
    `sample ${i + 1}: ${(wallMs / 1000).toFixed(2)} s wall, ${(cpuMs / 1000).toFixed(2)} s machine CPU, ` +
      `next in ${(sampled.intervalMs / 1000).toFixed(1)} s\n`,
  );
}
await pool.end();

const wall = median(taken.map((t) => t.wallMs));
const cpu = median(taken.map((t) => t.cpuMs));
const interval = median(taken.map((t) => t.intervalMs));
const share = (ms: number, every: number) => `${((100 * ms) / every).toFixed(1)}%`;
process.stdout.write(
  `median of ${samples}: ${(wall / 1000).toFixed(2)} s wall, ${(cpu / 1000).toFixed(2)} s machine CPU ` +
    `(${availableParallelism()} cores)\n` +
    `every ${METRIC_SAMPLE_INTERVAL_MS / 1000} s: sampling ${share(wall, METRIC_SAMPLE_INTERVAL_MS)} of the time, ` +
    `${share(cpu, METRIC_SAMPLE_INTERVAL_MS)} of one core\n` +
    `every ${(interval / 1000).toFixed(1)} s (the interval set): sampling ${share(wall, interval)} of the time, ` +
    `${share(cpu, interval)} of one core; ${(METRIC_SAMPLE_INTERVAL_MS / interval).toFixed(2)}x the fixed ` +
    `interval's cost\n`,
);
