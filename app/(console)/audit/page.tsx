import type { Metadata } from 'next';
import { Prefetched } from '@/components/data/prefetched';
import { AuditView } from '@/components/audit/audit-view';
import { PageHeader } from '@/components/ui/page-header';
import { can } from '@/lib/domain/roles';
import { auditList } from '@/lib/reads/audit';
import { readForPage } from '@/lib/reads/define-read';
import { page } from '@/lib/server/page';
import { auditSearchOf, loadAuditSearch } from '@/lib/url-state/audit';

export const metadata: Metadata = { title: 'Audit' };

export default page('read', {}, async function AuditPage({ actor, query }) {
  const events = await readForPage(auditList, actor, auditSearchOf(loadAuditSearch(query)), query);
  // Invalid filters are not prefetched: the view asks the API, whose field errors the form shows.
  return (
    <>
      <PageHeader
        title="Audit"
        description="Every action taken through Keel, applied or refused, newest first. Times are the server's clock."
      />
      <Prefetched queries={events.ok ? [events.prefetch] : []}>
        <AuditView canManageUsers={can(actor.role, 'manageUsers')} />
      </Prefetched>
    </>
  );
});
