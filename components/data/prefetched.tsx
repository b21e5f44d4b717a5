import { dehydrate, HydrationBoundary, QueryClient, type QueryKey } from '@tanstack/react-query';
import type { ReactNode } from 'react';

export interface PagePrefetch {
  /** The key the client view reads, from lib/query-keys.ts. */
  queryKey: QueryKey;
  /** The same read the page's API route answers with. */
  queryFn: () => Promise<unknown>;
}

/**
 * The console's one page-data pattern, server half: a page prefetches the queries its
 * client view reads into a HydrationBoundary, so the first paint has data and the
 * client then keeps it current through the read API with the same keys. Each value
 * goes through JSON, so the hydrated data has exactly the shape the API sends. A read
 * that fails is left out: the client asks the API, which names the problem.
 */
export async function Prefetched({ queries, children }: { queries: PagePrefetch[]; children: ReactNode }) {
  const client = new QueryClient();
  await Promise.all(
    queries.map(({ queryKey, queryFn }) =>
      client.prefetchQuery({ queryKey, queryFn: async () => JSON.parse(JSON.stringify(await queryFn())) as unknown }),
    ),
  );
  return <HydrationBoundary state={dehydrate(client)}>{children}</HydrationBoundary>;
}
