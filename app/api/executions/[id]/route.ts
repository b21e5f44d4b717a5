import { routeHandler } from '@/lib/reads/define-read';
import { executionDetail } from '@/lib/reads/executions';

export const dynamic = 'force-dynamic';

/** GET /api/executions/:id: the execution detail and whether this role may request a takeover now. */
export const GET = routeHandler(executionDetail);
