import { deadLetterFiltersSchema } from '@/lib/queries/settlements-types';
import { apiRoute } from '@/lib/server/api-route';
import { deadLettersPage } from '@/lib/server/console-reads';

export const dynamic = 'force-dynamic';

/** GET /api/settlements/dead-letters?q=&reason=&minAttempts=&maxAttempts=&minAge=&maxAge=&cursor= (newest first) */
export const GET = apiRoute('read', deadLetterFiltersSchema, (_actor, filters) => deadLettersPage(filters));
