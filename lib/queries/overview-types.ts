// The overview as the browser receives it: client-safe, so components may import it.

/** The metric sampler's last figures (lib/queries/overview.ts reads them). */
export interface OverviewFigures {
  /** Counted within two sampler intervals; older figures are shown as what they are, never recounted here. */
  fresh: boolean;
  executionsByStatus: { status: string; count: number }[];
  staleExecutions: number;
  pendingProposals: number;
  queue: { state: string; count: number }[];
  deadLettersByReason: { reason: string; count: number }[];
}

/** What /api/overview sends: the figures, the times as ISO 8601 text and the stale threshold. */
export interface OverviewView extends OverviewFigures {
  serverNow: string;
  /** When the figures were counted (the metric sampler's last sample), or null before its first. */
  sampledAt: string | null;
  staleThresholdMs: number;
}
