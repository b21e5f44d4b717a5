import { webhookDeliveryQuerySchema } from '@/lib/domain/webhook-filters';
import { listWebhookDeliveries, parseWebhookCursor } from '@/lib/queries/webhooks';
import { apiRoute } from '@/lib/server/api-route';
import { listDb } from '@/lib/server/read-source';

export const dynamic = 'force-dynamic';

/** GET /api/webhooks/deliveries?status=&cursor= : admins only, like the page. */
export const GET = apiRoute('manageWebhooks', webhookDeliveryQuerySchema, async (_actor, { cursor, ...filters }) => {
  const before = parseWebhookCursor(cursor);
  if (before === 'invalid') {
    return Response.json(
      {
        code: 'INVALID_INPUT',
        message: 'Some query parameters are not valid.',
        fieldErrors: { cursor: ['This cursor was not made by Keel.'] },
      },
      { status: 400, headers: { 'Cache-Control': 'no-store' } },
    );
  }
  return listWebhookDeliveries(await listDb(), filters, before);
});
