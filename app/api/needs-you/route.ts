import { needsYou } from '@/lib/reads/needs-you';
import { routeHandler } from '@/lib/reads/define-read';

export const dynamic = 'force-dynamic';

/** GET /api/needs-you: what waits on the reader's role, as the overview and the navigation show it. */
export const GET = routeHandler(needsYou);
