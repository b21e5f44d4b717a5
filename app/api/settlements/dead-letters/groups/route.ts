import { deadLetterGroups } from '@/lib/queries/settlements';
import { deadLetterFiltersSchema } from '@/lib/queries/settlements-types';
import { apiRoute } from '@/lib/server/api-route';
import { listDb } from '@/lib/server/read-source';

export const dynamic = 'force-dynamic';

/** GET /api/settlements/dead-letters/groups?<dead-letter filters>: counts by reason code (the reason filter is ignored). */
export const GET = apiRoute('read', deadLetterFiltersSchema, async (_actor, filters) => deadLetterGroups(await listDb(), filters));
