import 'server-only';
import { readOverview } from '../queries/overview';
import { runtime } from './composition-root';

/**
 * The overview's prefetch until its page reads through lib/reads/overview.ts like every other
 * page: the same answer GET /api/overview gives.
 */
export async function overviewPage() {
  const { db, settings } = runtime();
  const overview = await readOverview(db);
  return {
    ...overview,
    serverNow: overview.serverNow.toISOString(),
    sampledAt: overview.sampledAt?.toISOString() ?? null,
    staleThresholdMs: settings.staleThresholdMs,
  };
}
