import 'server-only';
import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';
import { METRIC_SAMPLE_INTERVAL_MS, METRICS, sampleMetrics } from '../workers/metric-sampler';

export interface Overview {
  serverNow: Date;
  /** When the figures below were counted (the metric sampler's last sample). */
  sampledAt: Date | null;
  executionsByStatus: { status: string; count: number }[];
  staleExecutions: number;
  pendingProposals: number;
  queue: { state: string; count: number }[];
  deadLettersByReason: { reason: string; count: number }[];
}

interface SampleRow extends Record<string, unknown> {
  now: Date;
  sampled_at: Date | null;
  metric: string | null;
  label: string | null;
  value: number | null;
}

// Older than two intervals means no sampler runs (a fresh start, or tests): sample once here.
const FRESH_FOR_MS = 2 * METRIC_SAMPLE_INTERVAL_MS;

async function lastSample(db: DbOrTx) {
  const { rows } = await db.execute<SampleRow>(sql`
    with last as (select max(sampled_at) as at from keel.metric_sample)
    select clock_timestamp() as now, last.at as sampled_at, m.metric, m.label, m.value
    from last left join keel.metric_sample m on m.sampled_at = last.at`);
  return rows;
}

/**
 * The overview's counts from the metric sampler's last sample (lib/workers/metric-sampler.ts),
 * so a page view or a scrape never counts the large tables itself; when the last sample is
 * older than two intervals one is taken first. Figures are at most one interval old.
 */
export async function readOverview(db: DbOrTx, staleThresholdMs: number): Promise<Overview> {
  let rows = await lastSample(db);
  const first = rows[0];
  if (!first?.sampled_at || new Date(first.now).getTime() - new Date(first.sampled_at).getTime() > FRESH_FOR_MS) {
    await sampleMetrics(db, { staleThresholdMs });
    rows = await lastSample(db);
  }
  const of = (metric: string) => rows.filter((r) => r.metric === metric).map((r) => ({ label: r.label ?? '', count: Number(r.value ?? 0) }));
  const one = (metric: string) => of(metric)[0]?.count ?? 0;
  return {
    serverNow: new Date(rows[0]!.now),
    sampledAt: rows[0]?.sampled_at ? new Date(rows[0].sampled_at) : null,
    executionsByStatus: of(METRICS.executions).filter((r) => r.count > 0).map(({ label, count }) => ({ status: label, count })).sort((a, b) => a.status.localeCompare(b.status)),
    staleExecutions: one(METRICS.staleExecutions),
    pendingProposals: one(METRICS.pendingProposals),
    queue: of(METRICS.queueDepth).filter((r) => r.count > 0).map(({ label, count }) => ({ state: label, count })).sort((a, b) => a.state.localeCompare(b.state)),
    deadLettersByReason: of(METRICS.deadLetters)
      .map(({ label, count }) => ({ reason: label, count }))
      .sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason)),
  };
}
