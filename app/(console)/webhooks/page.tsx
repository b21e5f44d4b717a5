import { dehydrate, HydrationBoundary, QueryClient } from '@tanstack/react-query';
import type { Metadata } from 'next';
import { ForbiddenNotice } from '@/components/users/forbidden-notice';
import { WebhookDeliveriesView } from '@/components/webhooks/webhook-deliveries-view';
import { PageHeader } from '@/components/ui/page-header';
import { can } from '@/lib/auth/roles';
import { webhookDeliveryQuerySchema, webhookDeliverySearch } from '@/lib/domain/webhook-filters';
import { listWebhookDeliveries, parseWebhookCursor } from '@/lib/queries/webhooks';
import { queryKeys } from '@/lib/query-keys';
import { requireActor } from '@/lib/server/session';
import { runtime } from '@/lib/server/runtime';

export const metadata: Metadata = { title: 'Webhooks' };

type SearchParams = Promise<Record<string, string | string[] | undefined>>;

export default async function WebhooksPage({ searchParams }: { searchParams: SearchParams }) {
  const actor = await requireActor();
  if (!can(actor.role, 'manageWebhooks')) {
    return <ForbiddenNotice role={actor.role} what="Only admins may see webhook deliveries." />;
  }
  const raw = Object.fromEntries(Object.entries(await searchParams).map(([k, v]) => [k, Array.isArray(v) ? v[0] : v]));
  const search = webhookDeliverySearch(raw);
  const queryClient = new QueryClient();
  const parsed = webhookDeliveryQuerySchema.safeParse(search);
  if (parsed.success) {
    const { cursor, ...filters } = parsed.data;
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
}
