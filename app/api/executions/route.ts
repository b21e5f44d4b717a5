import { routeHandler } from '@/lib/reads/define-read';
import { executionList } from '@/lib/reads/executions';

export const dynamic = 'force-dynamic';

/** GET /api/executions: the executions list with the page's filters and keyset cursor. */
export const GET = routeHandler(executionList);
