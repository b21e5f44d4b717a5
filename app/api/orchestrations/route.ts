import { routeHandler } from '@/lib/reads/define-read';
import { orchestrationLeases } from '@/lib/reads/recovery';

export const dynamic = 'force-dynamic';

/** GET /api/orchestrations?limit=: orchestration leases and whether each tag verifies. */
export const GET = routeHandler(orchestrationLeases);
