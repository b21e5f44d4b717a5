import type { Metadata } from 'next';
import { Prefetched } from '@/components/data/prefetched';
import { RetryKeysView } from '@/components/retry-keys/retry-keys-view';
import { PageHeader } from '@/components/ui/page-header';
import { InvalidFilters } from '@/components/ui/invalid-filters';
import { parseForPage, readForPage } from '@/lib/reads/define-read';
import { jobNames } from '@/lib/reads/executions';
import { retryKeyList } from '@/lib/reads/retry-keys';
import { page } from '@/lib/server/page';
import {
  corruptEnvelopesParams,
  loadRetryKeysSearch,
  RETRY_KEY_FILTER_WORDS,
  unresolvedKeysParams,
} from '@/lib/url-state/retry-keys';

export const metadata: Metadata = { title: 'Retry keys' };

export default page('read', {}, async function RetryKeysPage({ actor, query }) {
  const header = (
    <PageHeader
      title="Retry keys"
      description="Unresolved retry keys held in steps' fault-state envelopes, newest step first."
    />
  );
  // Both lists' params as the browser sent them, checked with the route's schema: a value the
  // route would refuse is named here too, not dropped. (`show`, the tab, is the page's own.)
  const refused = [unresolvedKeysParams(query), corruptEnvelopesParams(query)].flatMap((raw) => {
    const checked = parseForPage(retryKeyList, raw);
    return checked.ok ? [] : checked.issues;
  });
  if (refused.length > 0) {
    return (
      <>
        {header}
        <InvalidFilters issues={refused} words={RETRY_KEY_FILTER_WORDS} clearHref="/retry-keys" />
      </>
    );
  }
  const state = loadRetryKeysSearch(query);
  // Only the shown tab's list: the corrupt envelopes' walk is the slower read, and the keys
  // tab needs it only for the count in its label, which the browser asks for after hydrating.
  const shown = state.show === 'corrupt' ? corruptEnvelopesParams(state) : unresolvedKeysParams(state);
  const reads = await Promise.all([readForPage(retryKeyList, actor, shown), readForPage(jobNames, actor)]);
  return (
    <>
      {header}
      <Prefetched queries={reads.flatMap((read) => (read.ok ? [read.prefetch] : []))}>
        <RetryKeysView />
      </Prefetched>
    </>
  );
});
