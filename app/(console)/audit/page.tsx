import { dehydrate, HydrationBoundary, QueryClient } from '@tanstack/react-query';
import type { Metadata } from 'next';
import { AuditView } from '@/components/audit/audit-view';
import { PageHeader } from '@/components/ui/page-header';
import { auditListQuerySchema, auditSearch } from '@/lib/domain/audit-filters';
import { listAuditEvents, parseAuditCursor } from '@/lib/queries/audit';
import { queryKeys } from '@/lib/query-keys';
import { requireActor } from '@/lib/server/session';
import { runtime } from '@/lib/server/runtime';

export const metadata: Metadata = { title: 'Audit' };

type SearchParams = Promise<Record<string, string | string[] | undefined>>;

export default async function AuditPage({ searchParams }: { searchParams: SearchParams }) {
  await requireActor();
  const raw = Object.fromEntries(Object.entries(await searchParams).map(([k, v]) => [k, Array.isArray(v) ? v[0] : v]));
  const search = auditSearch(raw);
  const queryClient = new QueryClient();
  const parsed = auditListQuerySchema.safeParse(search);
  // Invalid filters are not prefetched: the client asks the API, which names the field.
  if (parsed.success) {
    const { cursor, ...filters } = parsed.data;
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
}
