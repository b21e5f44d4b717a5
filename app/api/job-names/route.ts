import { routeHandler } from '@/lib/reads/define-read';
import { jobNames } from '@/lib/reads/executions';

export const dynamic = 'force-dynamic';

/** GET /api/job-names: the runtime's job names, for the job filters. */
export const GET = routeHandler(jobNames);
