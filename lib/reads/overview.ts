import 'server-only';
import { readOverview } from '../queries/overview';
import type { OverviewView } from '../queries/overview-types';
import { runtime } from '../server/composition-root';
import { defineRead } from './define-read';

/**
 * The overview's counts, from the metric sampler's last sample: read-only, so a list source will
 * do. With no fresh sample (the sampler stopped, or has not run yet) it answers what it has and
 * says when that was counted; only the sampler writes samples.
 */
export const overview = defineRead({
  path: '/api/overview',
  permission: 'read',
  source: 'list',
  read: async (db): Promise<OverviewView> => {
    const figures = await readOverview(db);
    return {
      ...figures,
      serverNow: figures.serverNow.toISOString(),
      sampledAt: figures.sampledAt?.toISOString() ?? null,
      staleThresholdMs: runtime().settings.staleThresholdMs,
    };
  },
});
