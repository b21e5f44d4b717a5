import { z } from 'zod';
import { orchestrationPathSchema, readOrchestrationDetail } from '@/lib/queries/orchestration-detail';
import { apiRoute } from '@/lib/server/api-route';
import { primaryDb } from '@/lib/server/console-reads';
import { runtime } from '@/lib/server/composition-root';

export const dynamic = 'force-dynamic';

/**
 * GET /api/orchestrations/:id: one checkpoint (completed nodes, wait, retry policy, compensation,
 * snapshot digests) and whether its tag verifies, with why not; never the key or the tag.
 */
export const GET = apiRoute(
  'read',
  z.object({}),
  async (_actor, _query, { path }) => readOrchestrationDetail(primaryDb(), runtime().settings.checkpointKey, path.id),
  { params: orchestrationPathSchema },
);
