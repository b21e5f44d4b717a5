import { listProposals, proposalFiltersSchema } from '@/lib/queries/recovery';
import { apiRoute } from '@/lib/server/api-route';
import { listDb } from '@/lib/server/read-source';

export const dynamic = 'force-dynamic';

/** GET /api/proposals?status=&cursor=: recovery proposals, newest first. */
export const GET = apiRoute('read', proposalFiltersSchema, async (_actor, filters) =>
  listProposals(await listDb(), filters),
);
