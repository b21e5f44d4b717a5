import type { executionDetailPage, overviewPage, retryKeysPage } from '../server/console-reads';

// The shapes the read API answers with for these pages, for the client views that read them:
// the reads themselves are server wiring (lib/server/console-reads.ts), which components may not import.
export type OverviewPage = Awaited<ReturnType<typeof overviewPage>>;
export type RetryKeysPage = Awaited<ReturnType<typeof retryKeysPage>>;
export type ExecutionDetailPage = NonNullable<Awaited<ReturnType<typeof executionDetailPage>>>;
