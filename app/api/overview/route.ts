import { routeHandler } from '@/lib/reads/define-read';
import { overview } from '@/lib/reads/overview';

export const dynamic = 'force-dynamic';

/** GET /api/overview: the overview's counts as the page shows them, from the metric sampler's last sample. */
export const GET = routeHandler(overview);
