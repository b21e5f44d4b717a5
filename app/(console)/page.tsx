import type { Metadata } from 'next';
import { Prefetched } from '@/components/data/prefetched';
import { OverviewView } from '@/components/overview/overview-view';
import { readForPage } from '@/lib/reads/define-read';
import { rateCharts } from '@/lib/reads/rates';
import { needsYou } from '@/lib/reads/needs-you';
import { overview } from '@/lib/reads/overview';
import { page } from '@/lib/server/page';
import { overviewLinks } from '@/lib/url-state/overview';

export const metadata: Metadata = { title: 'Overview' };

export default page('read', {}, async function OverviewPage({ actor }) {
  const figures = await readForPage(overview, actor);
  // What needs the reader: the process's shared snapshot (lib/server/live-reads.ts).
  const needs = await readForPage(needsYou, actor);
  // The last hour's rates, read the way /rates reads its 1 h range.
  const rates = await readForPage(rateCharts, actor, { range: '1h' });
  return (
    <Prefetched
      queries={[
        ...(figures.ok ? [figures.prefetch] : []),
        ...(needs.ok ? [needs.prefetch] : []),
        ...(rates.ok ? [rates.prefetch] : []),
      ]}
    >
      <OverviewView links={overviewLinks()} />
    </Prefetched>
  );
});
