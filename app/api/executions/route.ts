import { listExecutions, executionFiltersSchema } from '@/lib/queries/executions';
import { apiRoute } from '@/lib/server/api-route';
import { runtime } from '@/lib/server/runtime';
import { listDb } from '@/lib/server/read-source';

export const dynamic = 'force-dynamic';

/** GET /api/executions: the executions list with the page's filters and keyset cursor. */
export const GET = apiRoute('read', executionFiltersSchema, async (_actor, filters) => {
  const { settings, ownerToken } = runtime();
  return listExecutions(await listDb(), filters, { staleThresholdMs: settings.staleThresholdMs, ownerToken });
});
