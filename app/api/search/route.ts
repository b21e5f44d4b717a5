import { searchPlan, searchQuerySchema } from '@/lib/domain/search';
import { searchEverything } from '@/lib/queries/search';
import { apiRoute } from '@/lib/server/api-route';
import { listDb } from '@/lib/server/read-source';

export const dynamic = 'force-dynamic';

/** GET /api/search?q= : every kind of id the text may be, grouped by kind; users only for a role that may open them. */
export const GET = apiRoute('read', searchQuerySchema, async (actor, { q }) =>
  searchEverything(await listDb(), q, searchPlan(q, actor.role)),
);
