import { routeHandler } from '@/lib/reads/define-read';
import { rateCharts } from '@/lib/reads/rates';

export const dynamic = 'force-dynamic';

/** GET /api/rates?range=1h|24h|7d : the /rates page's charts and markers. */
export const GET = routeHandler(rateCharts);
