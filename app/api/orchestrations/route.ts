import { z } from 'zod';
import { listOrchestrationLeases } from '@/lib/queries/recovery';
import { apiRoute } from '@/lib/server/api-route';
import { listDb } from '@/lib/server/read-source';
import { runtime } from '@/lib/server/composition-root';

export const dynamic = 'force-dynamic';

/** GET /api/orchestrations: leases with owner, fencing token, expiry and whether the tag verifies (never the tag's key). */
export const GET = apiRoute(
  'read',
  z.object({ limit: z.coerce.number().int().min(1).max(1000).optional() }),
  async (_actor, query) => {
    const { settings } = runtime();
    const db = await listDb();
    return listOrchestrationLeases(db, settings.checkpointKey!, query.limit);
  },
);
