import { routeHandler } from '@/lib/reads/define-read';
import { settlementQueue } from '@/lib/reads/settlements';

export const dynamic = 'force-dynamic';

/** GET /api/settlements/queue?state=&q=&reason=&minAttempts=&maxAttempts=&minAge=&maxAge=&cursor= */
export const GET = routeHandler(settlementQueue);
