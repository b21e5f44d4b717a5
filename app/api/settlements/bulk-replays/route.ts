import { listBulkReplays } from '@/lib/queries/settlements';
import { bulkReplayListSchema } from '@/lib/queries/settlements-types';
import { apiRoute } from '@/lib/server/api-route';
import { readDb } from '@/lib/server/console-reads';

export const dynamic = 'force-dynamic';

/** GET /api/settlements/bulk-replays?status=&cursor=: bulk replay jobs, newest first. */
export const GET = apiRoute('read', bulkReplayListSchema, (_actor, filters) => listBulkReplays(readDb(), filters));
