import { dehydrate, HydrationBoundary, QueryClient } from '@tanstack/react-query';
import type { Metadata } from 'next';
import { AuditView } from '@/components/audit/audit-view';
import { PageHeader } from '@/components/ui/page-header';
import { auditListQuerySchema, auditSearch } from '@/lib/domain/audit-filters';
import { listAuditEvents, parseAuditCursor } from '@/lib/queries/audit';
import { queryKeys } from '@/lib/query-keys';
import { page } from '@/lib/server/page';
import { runtime } from '@/lib/server/runtime';

export const metadata: Metadata = { title: 'Audit' };

export default page('read', { search: auditListQuerySchema }, async function AuditPage({ query, search: parsed }) {
  const search = auditSearch(query);
  const queryClient = new QueryClient();
  // Invalid filters are not prefetched: the client asks the API, which names the field.
  if (parsed.ok) {
    const { cursor, ...filters } = parsed.value;
    const at = parseAuditCursor(cursor);
    if (at !== 'invalid') queryClient.setQueryData(queryKeys.audit.list(search), await listAuditEvents(runtime().db, filters, at));
  }
  return (
    <>
      <PageHeader title="Audit" description="Every action taken through Keel, applied or refused, newest first. Times are the server's clock." />
      <HydrationBoundary state={dehydrate(queryClient)}>
        <AuditView />
      </HydrationBoundary>
    </>
  );
});
