import { z } from 'zod';
import { receiptPathSchema } from '@/lib/domain/path-segment';
import { readReceiptHistory } from '@/lib/queries/settlements';
import { apiRoute } from '@/lib/server/api-route';
import { primaryDb } from '@/lib/server/console-reads';

export const dynamic = 'force-dynamic';

/** GET /api/settlements/receipts/:receiptId: where the receipt is, its events, replays and audit trail. */
export const GET = apiRoute(
  'read',
  z.object({}),
  async (_actor, _query, { path }) => readReceiptHistory(primaryDb(), path.receiptId),
  {
    params: receiptPathSchema,
  },
);
