import type { Metadata } from 'next';
import { Prefetched } from '@/components/data/prefetched';
import { WebhookDeliveriesView } from '@/components/webhooks/webhook-deliveries-view';
import { PageHeader } from '@/components/ui/page-header';
import { readForPage } from '@/lib/reads/define-read';
import { webhookDeliveries } from '@/lib/reads/webhooks';
import { page } from '@/lib/server/page';
import { loadWebhooksSearch } from '@/lib/url-state/webhooks';

export const metadata: Metadata = { title: 'Webhooks' };

// A non-admin gets a real HTTP 403 from page() (forbidden()), before anything is read.
export default page('manageWebhooks', {}, async function WebhooksPage({ actor, query }) {
  const deliveries = await readForPage(webhookDeliveries, actor, loadWebhooksSearch(query), query);
  return (
    <>
      <PageHeader
        title="Webhooks"
        description={
          'Notifications Keel posts to chat and incident tools, each signed and retried with backoff. ' +
          'Endpoints come from KEEL_WEBHOOK_URLS.'
        }
      />
      <Prefetched queries={deliveries.ok ? [deliveries.prefetch] : []}>
        <WebhookDeliveriesView />
      </Prefetched>
    </>
  );
});
