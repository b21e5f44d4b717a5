import { createHash, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { apiRoute } from '@/lib/server/api-route';
import { renderMetrics } from '@/lib/server/metrics-scrape';
import { runtime } from '@/lib/server/composition-root';

export const dynamic = 'force-dynamic';

async function metricsResponse(): Promise<Response> {
  const { db, settings, replica } = runtime();
  const { contentType, body } = await renderMetrics(db, settings.staleThresholdMs, replica?.monitor.state() ?? null, {
    deadLetterThreshold: settings.webhooks.deadLetterThreshold,
  });
  return new Response(body, { headers: { 'Content-Type': contentType, 'Cache-Control': 'no-store' } });
}

const signedIn = apiRoute('read', z.object({}), metricsResponse);

/** Compared as digests, so neither the length nor the bytes of the token leak through timing. */
function tokenMatches(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/**
 * GET /api/metrics : Prometheus text. Gauges come from the database (the metric
 * sampler's last figures and the alerting figures read now); counters and histograms are
 * this server's (every HTTP process's, summed). A scraper presents
 * `Authorization: Bearer <KEEL_METRICS_TOKEN>`; people use their session.
 */
export async function GET(request: Request, context: unknown) {
  const header = request.headers.get('authorization');
  if (header?.startsWith('Bearer ')) {
    const expected = runtime().settings.metricsToken;
    if (!expected || !tokenMatches(header.slice('Bearer '.length), expected)) {
      return Response.json(
        { code: 'UNAUTHENTICATED', message: 'Unknown metrics token.' },
        { status: 401, headers: { 'Cache-Control': 'no-store' } },
      );
    }
    return metricsResponse();
  }
  return signedIn(request, context);
}
