import { routeHandler } from '@/lib/reads/define-read';
import { deadLetterGroupList } from '@/lib/reads/settlements';

export const dynamic = 'force-dynamic';

/** GET /api/settlements/dead-letters/groups?<dead-letter filters>: counts by reason code. */
export const GET = routeHandler(deadLetterGroupList);
