import 'server-only';
import type { DbOrTx } from '../db/client';
import { METRICS } from '../observability/metric-catalogue';
import { sampleMetrics } from '../workers/metric-sampler';
import { readLastSample } from './last-sample';

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

/**
 * The overview's counts from the metric sampler's last sample (lib/workers/metric-sampler.ts),
 * so a page view or a scrape never counts the large tables itself; when the last sample is
 * older than two intervals one is taken first. Figures are at most one interval old.
 */
export async function readOverview(db: DbOrTx, staleThresholdMs: number): Promise<Overview> {
  let sample = await readLastSample(db);
  if (!sample.fresh) {
    await sampleMetrics(db, { staleThresholdMs });
    sample = await readLastSample(db);
  }
  const of = (metric: string) =>
    sample.rows.filter((r) => r.metric === metric).map(({ label, value }) => ({ label, count: value }));
  const one = (metric: string) => of(metric)[0]?.count ?? 0;
  return {
    serverNow: sample.now,
    sampledAt: sample.sampledAt,
    executionsByStatus: of(METRICS.executions)
      .filter((r) => r.count > 0)
      .map(({ label, count }) => ({ status: label, count }))
      .sort((a, b) => a.status.localeCompare(b.status)),
    staleExecutions: one(METRICS.staleExecutions),
    pendingProposals: one(METRICS.pendingProposals),
    queue: of(METRICS.queueDepth)
      .filter((r) => r.count > 0)
      .map(({ label, count }) => ({ state: label, count }))
      .sort((a, b) => a.state.localeCompare(b.state)),
    deadLettersByReason: of(METRICS.deadLetters)
      .map(({ label, count }) => ({ reason: label, count }))
      .sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason)),
  };
}
