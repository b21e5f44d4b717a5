import { routeHandler } from '@/lib/reads/define-read';
import { proposalList } from '@/lib/reads/recovery';

export const dynamic = 'force-dynamic';

/** GET /api/proposals?status=&cursor=: recovery proposals, newest first. */
export const GET = routeHandler(proposalList);
