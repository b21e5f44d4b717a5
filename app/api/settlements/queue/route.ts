import { queueFiltersSchema } from '@/lib/queries/settlements-types';
import { apiRoute } from '@/lib/server/api-route';
import { settlementQueuePage } from '@/lib/server/console-reads';

export const dynamic = 'force-dynamic';

/** GET /api/settlements/queue?state=&q=&reason=&minAttempts=&maxAttempts=&minAge=&maxAge=&cursor= */
export const GET = apiRoute('read', queueFiltersSchema, (_actor, filters) => settlementQueuePage(filters));
