import { z } from 'zod';
import { readExecutionDetail } from '@/lib/queries/execution-detail';
import { apiRoute } from '@/lib/server/api-route';
import { runtime } from '@/lib/server/runtime';

export const dynamic = 'force-dynamic';

const idSchema = z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER);

/** GET /api/executions/:id: the execution detail (steps, owner observation, history, audit). */
export const GET = apiRoute('read', z.object({}), async (_actor, _query, context: { params: Promise<{ id: string }> }) => {
  const id = idSchema.safeParse((await context.params).id);
  if (!id.success) return Response.json({ code: 'INVALID_INPUT', message: 'Execution ids are positive integers.' }, { status: 400 });
  const { db, settings, ownerToken } = runtime();
  return readExecutionDetail(db, id.data, { staleThresholdMs: settings.staleThresholdMs, ownerToken });
});
