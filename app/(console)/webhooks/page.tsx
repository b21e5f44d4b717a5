import type { Metadata } from 'next';
import { Prefetched } from '@/components/data/prefetched';
import { WebhookDeliveriesView } from '@/components/webhooks/webhook-deliveries-view';
import { PageHeader } from '@/components/ui/page-header';
import { webhookDeliveryQuerySchema, webhookDeliverySearch } from '@/lib/domain/webhook-filters';
import { listWebhookDeliveries, parseWebhookCursor } from '@/lib/queries/webhooks';
import { queryKeys } from '@/lib/query-keys';
import { page } from '@/lib/server/page';
import { listDb } from '@/lib/server/read-source';
import { loadWebhooksSearch } from '@/lib/url-state/webhooks';

export const metadata: Metadata = { title: 'Webhooks' };

// A non-admin gets a real HTTP 403 from page() (forbidden()), before anything is read.
export default page(
  'manageWebhooks',
  { search: webhookDeliveryQuerySchema },
  async function WebhooksPage({ query, search: parsed }) {
    const search = webhookDeliverySearch(loadWebhooksSearch(query));
    const { cursor, ...filters } = parsed.ok ? parsed.value : {};
    const before = parsed.ok ? parseWebhookCursor(cursor) : 'invalid';
    const queries =
      before === 'invalid'
        ? []
        : [
            {
              queryKey: queryKeys.webhooks.deliveries(search),
              queryFn: async () => listWebhookDeliveries(await listDb(), filters, before),
            },
          ];
    return (
      <>
        <PageHeader
          title="Webhooks"
          description="Notifications Keel posts to chat and incident tools, each signed and retried with backoff. Endpoints come from KEEL_WEBHOOK_URLS."
        />
        <Prefetched queries={queries}>
          <WebhookDeliveriesView />
        </Prefetched>
      </>
    );
  },
);
