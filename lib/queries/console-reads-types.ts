import type { overviewPage } from '../server/console-reads';

// The overview's shape for its view, until the overview reads through lib/reads/overview.ts
// (its handle, overviewQuery in lib/reads/queries.ts, carries the same type).
export type OverviewPage = Awaited<ReturnType<typeof overviewPage>>;
