import type { Metadata } from 'next';
import { Prefetched } from '@/components/data/prefetched';
import { RatesView } from '@/components/rates/rates-view';
import { InvalidFilters } from '@/components/ui/invalid-filters';
import { PageHeader } from '@/components/ui/page-header';
import { readForPage } from '@/lib/reads/define-read';
import { rateCharts } from '@/lib/reads/rates';
import { page } from '@/lib/server/page';
import { loadRatesSearch, RATE_FILTER_WORDS, rateRangeHrefs } from '@/lib/url-state/rates';

export const metadata: Metadata = { title: 'Rates' };

export default page('read', {}, async function RatesPage({ actor, query }) {
  const charts = await readForPage(rateCharts, actor, loadRatesSearch(query), query);
  if (!charts.ok) {
    return (
      <>
        <PageHeader title="Rates" />
        <InvalidFilters issues={charts.issues} words={RATE_FILTER_WORDS} clearHref="/rates" />
      </>
    );
  }
  return (
    <Prefetched queries={[charts.prefetch]}>
      <RatesView hrefs={rateRangeHrefs()} />
    </Prefetched>
  );
});
