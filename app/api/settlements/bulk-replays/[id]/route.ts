import { idPathSchema } from '@/lib/domain/path-segment';
import { readBulkReplayDetail } from '@/lib/queries/settlements';
import { bulkReplayItemsSchema } from '@/lib/queries/settlements-types';
import { apiRoute } from '@/lib/server/api-route';
import { primaryDb } from '@/lib/server/console-reads';

export const dynamic = 'force-dynamic';

/** GET /api/settlements/bulk-replays/:id?result=&after=: progress, counts by result, and a page of items. */
export const GET = apiRoute(
  'read',
  bulkReplayItemsSchema,
  async (_actor, page, { path }) => readBulkReplayDetail(primaryDb(), path.id, page),
  {
    params: idPathSchema,
  },
);
