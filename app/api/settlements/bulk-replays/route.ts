import { routeHandler } from '@/lib/reads/define-read';
import { bulkReplayList } from '@/lib/reads/settlements';

export const dynamic = 'force-dynamic';

/** GET /api/settlements/bulk-replays?status=&cursor=: bulk replay jobs, newest first. */
export const GET = routeHandler(bulkReplayList);
