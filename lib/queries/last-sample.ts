import 'server-only';
import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';
import { METRICS } from '../observability/metric-catalogue';
import { METRIC_SAMPLE_INTERVAL_MS } from '../workers/metric-sampler';

/** The metric sampler's last sample (lib/workers/metric-sampler.ts) and the server's clock, read together. */
export interface LastSample {
  now: Date;
  /** The server's clock in epoch ms, as settlementNowMs reads it. */
  nowMs: number;
  sampledAt: Date | null;
  /**
   * Taken within two sampler intervals: the interval the sample set, at least 15 s. Older means
   * no sampler runs (a fresh start, or tests).
   */
  fresh: boolean;
  rows: { metric: string; label: string; value: number }[];
}

interface SampleRow extends Record<string, unknown> {
  now: Date;
  now_ms: string | number;
  sampled_at: Date | null;
  metric: string | null;
  label: string | null;
  value: number | null;
}

/** One indexed read of the latest `sampled_at`: the figures every view may use instead of counting large tables. */
export async function readLastSample(db: DbOrTx): Promise<LastSample> {
  const { rows } = await db.execute<SampleRow>(sql`
    with last as (select max(sampled_at) as at from keel.metric_sample),
         clock as (select clock_timestamp() as now)
    select clock.now, (extract(epoch from clock.now) * 1000)::bigint as now_ms, last.at as sampled_at, m.metric,
    m.label, m.value
    from clock, last left join keel.metric_sample m on m.sampled_at = last.at`);
  const first = rows[0]!;
  const now = new Date(first.now);
  const sampledAt = first.sampled_at ? new Date(first.sampled_at) : null;
  const sampled = rows
    .filter((r) => r.metric !== null)
    .map((r) => ({ metric: r.metric!, label: r.label ?? '', value: Number(r.value ?? 0) }));
  const interval = sampled.find((r) => r.metric === METRICS.sampleIntervalSeconds && r.label === '');
  const intervalMs = Math.max(METRIC_SAMPLE_INTERVAL_MS, (interval?.value ?? 0) * 1000);
  return {
    now,
    nowMs: Number(first.now_ms),
    sampledAt,
    fresh: sampledAt !== null && now.getTime() - sampledAt.getTime() <= 2 * intervalMs,
    rows: sampled,
  };
}

/** A sampled figure when the sample is fresh, else null (the caller counts or estimates itself). */
export function sampledFigure(sample: LastSample | null, metric: string, label = ''): number | null {
  if (!sample?.fresh) return null;
  const row = sample.rows.find((r) => r.metric === metric && r.label === label);
  return row ? row.value : null;
}
