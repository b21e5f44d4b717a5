import { routeHandler } from '@/lib/reads/define-read';
import { orchestrationDetail } from '@/lib/reads/recovery';

export const dynamic = 'force-dynamic';

/** GET /api/orchestrations/:id: one checkpoint and whether its tag verifies, with why not. */
export const GET = routeHandler(orchestrationDetail);
