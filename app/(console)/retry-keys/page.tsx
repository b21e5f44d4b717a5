import type { Metadata } from 'next';
import { z } from 'zod';
import { Prefetched } from '@/components/data/prefetched';
import { RetryKeysView } from '@/components/retry-keys/retry-keys-view';
import { PageHeader } from '@/components/ui/page-header';
import { InvalidFilters } from '@/components/ui/invalid-filters';
import { FAILURE_CATEGORIES, FAULT_PHASES } from '@/lib/domain/batch-status';
import { singleLineText } from '@/lib/domain/text';
import { queryKeys } from '@/lib/query-keys';
import { jobNames, retryKeysPage } from '@/lib/server/console-reads';
import { page } from '@/lib/server/page';
import { retryKeyCursorText } from '@/lib/server/retry-key-cursor';
import { corruptEnvelopesParams, loadRetryKeysSearch, unresolvedKeysParams } from '@/lib/url-state/retry-keys';
import { RETRY_KEY_FILTER_WORDS } from '@/lib/url-state/retry-keys';

export const metadata: Metadata = { title: 'Retry keys' };

const filtersSchema = z.object({
  job: singleLineText(128).optional(),
  phase: z.enum(FAULT_PHASES).optional().catch(undefined),
  category: z.enum(FAILURE_CATEGORIES).optional().catch(undefined),
  execution: z.coerce.number().int().positive().optional(),
  cursor: retryKeyCursorText().optional(),
  corruptCursor: retryKeyCursorText().optional(),
  /** Which list to show: the unresolved keys (default) or the corrupt envelopes, each a tab of its own. */
  show: z.enum(['keys', 'corrupt']).optional().catch(undefined),
});

export default page('read', { search: filtersSchema }, async function RetryKeysPage({ query, search }) {
  const header = (
    <PageHeader
      title="Retry keys"
      description="Unresolved retry keys held in steps' fault-state envelopes, newest step first."
    />
  );
  if (!search.ok) {
    return (
      <>
        {header}
        <InvalidFilters issues={search.issues} words={RETRY_KEY_FILTER_WORDS} clearHref="/retry-keys" />
      </>
    );
  }
  const state = loadRetryKeysSearch(query);
  // Only the shown tab's list: the corrupt envelopes' walk is the slower read, and the keys
  // tab needs it only for the count in its label, which the browser asks for after hydrating.
  const shown = state.show === 'corrupt' ? corruptEnvelopesParams(state) : unresolvedKeysParams(state);
  return (
    <>
      {header}
      <Prefetched
        queries={[
          { queryKey: queryKeys.retryKeys.list(shown), queryFn: () => retryKeysPage(shown) },
          { queryKey: queryKeys.jobNames(), queryFn: jobNames },
        ]}
      >
        <RetryKeysView />
      </Prefetched>
    </>
  );
});
