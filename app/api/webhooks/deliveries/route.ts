import { routeHandler } from '@/lib/reads/define-read';
import { webhookDeliveries } from '@/lib/reads/webhooks';

export const dynamic = 'force-dynamic';

/** GET /api/webhooks/deliveries?status=&cursor= : admins only, like the page. */
export const GET = routeHandler(webhookDeliveries);
