import { routeHandler } from '@/lib/reads/define-read';
import { searchResults } from '@/lib/reads/search';

export const dynamic = 'force-dynamic';

/** GET /api/search?q= : every kind of id the text may be, grouped by kind. */
export const GET = routeHandler(searchResults);
