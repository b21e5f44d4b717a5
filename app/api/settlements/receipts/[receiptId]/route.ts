import { routeHandler } from '@/lib/reads/define-read';
import { receiptHistory } from '@/lib/reads/settlements';

export const dynamic = 'force-dynamic';

/** GET /api/settlements/receipts/:receiptId: where the receipt is, its events, replays and audit trail. */
export const GET = routeHandler(receiptHistory);
