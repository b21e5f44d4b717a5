import { z } from 'zod';
import { apiRoute } from '@/lib/server/api-route';
import { renderMetrics } from '@/lib/server/metrics';
import { runtime } from '@/lib/server/runtime';

export const dynamic = 'force-dynamic';

/**
 * GET /api/metrics : Prometheus text. Gauges are counted from the database at
 * scrape time; counters and histograms are this process's. Behind sign-in like
 * every other read (README, Decisions).
 */
export const GET = apiRoute('read', z.object({}), async () => {
  const { db, settings } = runtime();
  const { contentType, body } = await renderMetrics(db, settings.staleThresholdMs);
  return new Response(body, { headers: { 'Content-Type': contentType, 'Cache-Control': 'no-store' } });
});
