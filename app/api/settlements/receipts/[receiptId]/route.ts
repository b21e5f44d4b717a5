import { z } from 'zod';
import { readReceiptHistory } from '@/lib/queries/settlements';
import { apiRoute } from '@/lib/server/api-route';
import { runtime } from '@/lib/server/runtime';

export const dynamic = 'force-dynamic';

/** GET /api/settlements/receipts/:receiptId: where the receipt is, its events, replays and audit trail. */
export const GET = apiRoute('read', z.object({}), async (_actor, _query, context: { params: Promise<{ receiptId: string }> }) => {
  const { receiptId } = await context.params;
  if (receiptId.length === 0 || receiptId.length > 1_000) {
    return Response.json({ code: 'INVALID_INPUT', message: 'A receipt id is 1 to 1,000 characters.' }, { status: 400 });
  }
  return readReceiptHistory(runtime().db, receiptId);
});
