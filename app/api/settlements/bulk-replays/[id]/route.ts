import { z } from 'zod';
import { readBulkReplayDetail } from '@/lib/queries/settlements';
import { bulkReplayItemsSchema } from '@/lib/queries/settlements-types';
import { apiRoute } from '@/lib/server/api-route';
import { runtime } from '@/lib/server/runtime';

export const dynamic = 'force-dynamic';

const idSchema = z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER);

/** GET /api/settlements/bulk-replays/:id?result=&after=: progress, counts by result, and a page of items. */
export const GET = apiRoute('read', bulkReplayItemsSchema, async (_actor, page, context: { params: Promise<{ id: string }> }) => {
  const id = idSchema.safeParse((await context.params).id);
  if (!id.success) return Response.json({ code: 'INVALID_INPUT', message: 'Bulk replay ids are positive integers.' }, { status: 400 });
  return readBulkReplayDetail(runtime().db, id.data, page);
});
