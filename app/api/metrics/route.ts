import { createHash, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { apiRoute } from '@/lib/server/api-route';
import { renderMetrics } from '@/lib/server/metrics';
import { runtime } from '@/lib/server/runtime';

export const dynamic = 'force-dynamic';

async function metricsResponse(): Promise<Response> {
  const { db, settings, replica } = runtime();
  const { contentType, body } = await renderMetrics(db, settings.staleThresholdMs, replica?.monitor.state() ?? null);
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
 * GET /api/metrics : Prometheus text. Gauges are counted from the database at
 * scrape time; counters and histograms are this process's. A scraper presents
 * `Authorization: Bearer <KEEL_METRICS_TOKEN>`; people use their session.
 */
export async function GET(request: Request, context: unknown) {
  const header = request.headers.get('authorization');
  if (header?.startsWith('Bearer ')) {
    const expected = runtime().settings.metricsToken;
    if (!expected || !tokenMatches(header.slice('Bearer '.length), expected)) {
      return Response.json({ code: 'UNAUTHENTICATED', message: 'Unknown metrics token.' }, { status: 401, headers: { 'Cache-Control': 'no-store' } });
    }
    return metricsResponse();
  }
  return signedIn(request, context);
}
