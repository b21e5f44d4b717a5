import type { Metadata } from 'next';
import { Prefetched } from '@/components/data/prefetched';
import { OverviewView } from '@/components/overview/overview-view';
import { queryKeys } from '@/lib/query-keys';
import { overviewPage } from '@/lib/server/console-reads';
import { page } from '@/lib/server/page';
import { overviewLinks } from '@/lib/url-state/overview';

export const metadata: Metadata = { title: 'Overview' };

export default page('read', {}, async function OverviewPage() {
  return (
    <Prefetched queries={[{ queryKey: queryKeys.overview(), queryFn: overviewPage }]}>
      <OverviewView links={overviewLinks()} />
    </Prefetched>
  );
});
