import { listSettlementQueue } from '@/lib/queries/settlements';
import { queueFiltersSchema } from '@/lib/queries/settlements-types';
import { apiRoute } from '@/lib/server/api-route';
import { listDb } from '@/lib/server/read-source';

export const dynamic = 'force-dynamic';

/** GET /api/settlements/queue?state=&q=&reason=&minAttempts=&maxAttempts=&minAge=&maxAge=&cursor= */
export const GET = apiRoute('read', queueFiltersSchema, async (_actor, filters) => listSettlementQueue(await listDb(), filters));
