import type { Metadata } from 'next';
import { Prefetched } from '@/components/data/prefetched';
import { AuditView } from '@/components/audit/audit-view';
import { PageHeader } from '@/components/ui/page-header';
import { auditListQuerySchema } from '@/lib/domain/audit-filters';
import { can } from '@/lib/domain/roles';
import { listAuditEvents, parseAuditCursor } from '@/lib/queries/audit';
import { queryKeys } from '@/lib/query-keys';
import { page } from '@/lib/server/page';
import { listDb } from '@/lib/server/read-source';
import { auditSearchOf, loadAuditSearch } from '@/lib/url-state/audit';

export const metadata: Metadata = { title: 'Audit' };

export default page(
  'read',
  { search: auditListQuerySchema },
  async function AuditPage({ actor, query, search: parsed }) {
    const search = auditSearchOf(loadAuditSearch(query));
    const { cursor, ...filters } = parsed.ok ? parsed.value : {};
    const at = parsed.ok ? parseAuditCursor(cursor) : 'invalid';
    // Invalid filters are not prefetched: the client asks the API, which names the field.
    const queries =
      at === 'invalid'
        ? []
        : [
            {
              queryKey: queryKeys.audit.list(search),
              queryFn: async () => listAuditEvents(await listDb(), actor, filters, at),
            },
          ];
    return (
      <>
        <PageHeader
          title="Audit"
          description="Every action taken through Keel, applied or refused, newest first. Times are the server's clock."
        />
        <Prefetched queries={queries}>
          <AuditView canManageUsers={can(actor.role, 'manageUsers')} />
        </Prefetched>
      </>
    );
  },
);
