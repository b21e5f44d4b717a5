import { z } from 'zod';
import { apiRoute } from '@/lib/server/api-route';
import { jobNames } from '@/lib/server/console-reads';

export const dynamic = 'force-dynamic';

/** GET /api/job-names: the runtime's job names, for the job filters. */
export const GET = apiRoute('read', z.object({}), async () => jobNames());
