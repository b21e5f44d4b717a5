import { routeHandler } from '@/lib/reads/define-read';
import { retryKeyList } from '@/lib/reads/retry-keys';

export const dynamic = 'force-dynamic';

/** GET /api/retry-keys: unresolved keys across steps (or corrupt envelopes), as the page shows them. */
export const GET = routeHandler(retryKeyList);
