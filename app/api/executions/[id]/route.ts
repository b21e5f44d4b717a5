import { z } from 'zod';
import { idPathSchema } from '@/lib/domain/path-segment';
import { apiRoute } from '@/lib/server/api-route';
import { executionDetailPage } from '@/lib/server/console-reads';

export const dynamic = 'force-dynamic';

/** GET /api/executions/:id: the execution detail (steps, owner observation, history, audit) and
 * whether this role may request a takeover now (or the rule it fails). */
export const GET = apiRoute(
  'read',
  z.object({}),
  async (actor, _query, { path }) => executionDetailPage(path.id, actor.role),
  { params: idPathSchema },
);
