import 'server-only';
import type { DbOrTx } from '../db/client';
import { METRICS } from '../observability/metric-catalogue';
import { readLastSample } from './last-sample';
import type { OverviewFigures } from './overview-types';

export interface Overview extends OverviewFigures {
  serverNow: Date;
  /** When the figures were counted (the metric sampler's last sample), or null before its first. */
  sampledAt: Date | null;
}

/**
 * The overview's counts from the metric sampler's last sample (lib/workers/metric-sampler.ts),
 * so a page view or a scrape never counts the large tables itself. A read model never writes:
 * the sampler alone takes samples, so with none fresh the overview says how old its figures are.
 */
export async function readOverview(db: DbOrTx): Promise<Overview> {
  const sample = await readLastSample(db);
  const of = (metric: string) =>
    sample.rows.filter((r) => r.metric === metric).map(({ label, value }) => ({ label, count: value }));
  const one = (metric: string) => of(metric)[0]?.count ?? 0;
  return {
    serverNow: sample.now,
    sampledAt: sample.sampledAt,
    fresh: sample.fresh,
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
