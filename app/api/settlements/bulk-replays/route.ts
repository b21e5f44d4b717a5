import { listBulkReplays } from '@/lib/queries/settlements';
import { bulkReplayListSchema } from '@/lib/queries/settlements-types';
import { apiRoute } from '@/lib/server/api-route';
import { listDb } from '@/lib/server/read-source';

export const dynamic = 'force-dynamic';

/** GET /api/settlements/bulk-replays?status=&cursor=: bulk replay jobs, newest first. */
export const GET = apiRoute('read', bulkReplayListSchema, async (_actor, filters) =>
  listBulkReplays(await listDb(), filters),
);
