import { deadLetterFiltersSchema } from '@/lib/queries/settlements-types';
import { apiRoute } from '@/lib/server/api-route';
import { deadLetterGroupsPage } from '@/lib/server/console-reads';

export const dynamic = 'force-dynamic';

/** GET /api/settlements/dead-letters/groups?<dead-letter filters>: counts by reason code (the reason filter is ignored). */
export const GET = apiRoute('read', deadLetterFiltersSchema, (_actor, filters) => deadLetterGroupsPage(filters));
