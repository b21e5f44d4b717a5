import { listDeadLetterPage } from '@/lib/queries/settlements';
import { deadLetterFiltersSchema } from '@/lib/queries/settlements-types';
import { apiRoute } from '@/lib/server/api-route';
import { listDb } from '@/lib/server/read-source';

export const dynamic = 'force-dynamic';

/** GET /api/settlements/dead-letters?q=&reason=&minAttempts=&maxAttempts=&minAge=&maxAge=&cursor= (newest first) */
export const GET = apiRoute('read', deadLetterFiltersSchema, async (_actor, filters) => listDeadLetterPage(await listDb(), filters));
