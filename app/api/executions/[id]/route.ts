import { z } from 'zod';
import { idPathSchema } from '@/lib/domain/path-segment';
import { readExecutionDetail } from '@/lib/queries/execution-detail';
import { apiRoute } from '@/lib/server/api-route';
import { runtime } from '@/lib/server/runtime';

export const dynamic = 'force-dynamic';

/** GET /api/executions/:id: the execution detail (steps, owner observation, history, audit). */
export const GET = apiRoute(
  'read',
  z.object({}),
  async (_actor, _query, { path }) => {
    const { db, settings, ownerToken } = runtime();
    return readExecutionDetail(db, path.id, { staleThresholdMs: settings.staleThresholdMs, ownerToken });
  },
  { params: idPathSchema },
);
