import { executionFiltersSchema } from '@/lib/queries/executions';
import { apiRoute } from '@/lib/server/api-route';
import { executionsPage } from '@/lib/server/console-reads';

export const dynamic = 'force-dynamic';

/** GET /api/executions: the executions list with the page's filters and keyset cursor. */
export const GET = apiRoute('read', executionFiltersSchema, async (_actor, filters) => executionsPage(filters));
