import { routeHandler } from '@/lib/reads/define-read';
import { proposalDetail } from '@/lib/reads/recovery';

export const dynamic = 'force-dynamic';

/** GET /api/proposals/:id: a proposal with its evidence, markers, digest and deadline. */
export const GET = routeHandler(proposalDetail);
