import { routeHandler } from '@/lib/reads/define-read';
import { deadLetterList } from '@/lib/reads/settlements';

export const dynamic = 'force-dynamic';

/** GET /api/settlements/dead-letters?q=&reason=&minAttempts=&maxAttempts=&minAge=&maxAge=&cursor= (newest first) */
export const GET = routeHandler(deadLetterList);
