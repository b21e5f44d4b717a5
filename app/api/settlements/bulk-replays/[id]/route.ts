import { routeHandler } from '@/lib/reads/define-read';
import { bulkReplayDetail } from '@/lib/reads/settlements';

export const dynamic = 'force-dynamic';

/** GET /api/settlements/bulk-replays/:id?result=&after=: progress, counts by result, a page of items. */
export const GET = routeHandler(bulkReplayDetail);
