import { dehydrate, HydrationBoundary, QueryClient } from '@tanstack/react-query';
import type { Metadata } from 'next';
import { WebhookDeliveriesView } from '@/components/webhooks/webhook-deliveries-view';
import { PageHeader } from '@/components/ui/page-header';
import { webhookDeliveryQuerySchema, webhookDeliverySearch } from '@/lib/domain/webhook-filters';
import { listWebhookDeliveries, parseWebhookCursor } from '@/lib/queries/webhooks';
import { queryKeys } from '@/lib/query-keys';
import { page } from '@/lib/server/page';
import { runtime } from '@/lib/server/runtime';

export const metadata: Metadata = { title: 'Webhooks' };

// A non-admin gets a real HTTP 403 from page() (forbidden()), before anything is read.
export default page('manageWebhooks', { search: webhookDeliveryQuerySchema }, async function WebhooksPage({ query, search: parsed }) {
  const search = webhookDeliverySearch(query);
  const queryClient = new QueryClient();
  if (parsed.ok) {
    const { cursor, ...filters } = parsed.value;
    const before = parseWebhookCursor(cursor);
    if (before !== 'invalid') queryClient.setQueryData(queryKeys.webhooks.deliveries(search), await listWebhookDeliveries(runtime().db, filters, before));
  }
  return (
    <>
      <PageHeader
        title="Webhooks"
        description="Notifications Keel posts to chat and incident tools, each signed and retried with backoff. Endpoints come from KEEL_WEBHOOK_URLS."
      />
      <HydrationBoundary state={dehydrate(queryClient)}>
        <WebhookDeliveriesView />
      </HydrationBoundary>
    </>
  );
});
