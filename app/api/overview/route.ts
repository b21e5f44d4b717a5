import { z } from 'zod';
import { apiRoute } from '@/lib/server/api-route';
import { overviewPage } from '@/lib/server/console-reads';

export const dynamic = 'force-dynamic';

/** GET /api/overview: the overview's counts and last-hour charts, as the page shows them. */
export const GET = apiRoute('read', z.object({}), async () => overviewPage());
