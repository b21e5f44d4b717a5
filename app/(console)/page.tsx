import type { Metadata } from 'next';
import { Prefetched } from '@/components/data/prefetched';
import { OverviewView } from '@/components/overview/overview-view';
import { queryKeys } from '@/lib/query-keys';
import { readForPage } from '@/lib/reads/define-read';
import { rateCharts } from '@/lib/reads/rates';
import { overviewPage } from '@/lib/server/console-reads';
import { page } from '@/lib/server/page';
import { overviewLinks } from '@/lib/url-state/overview';

export const metadata: Metadata = { title: 'Overview' };

export default page('read', {}, async function OverviewPage({ actor }) {
  // The last hour's rates, read the way /rates reads its 1 h range.
  const rates = await readForPage(rateCharts, actor, { range: '1h' });
  return (
    <Prefetched
      queries={[{ queryKey: queryKeys.overview(), queryFn: overviewPage }, ...(rates.ok ? [rates.prefetch] : [])]}
    >
      <OverviewView links={overviewLinks()} />
    </Prefetched>
  );
});
