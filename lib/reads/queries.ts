import type { auditList } from './audit';
import type { executionDetail, executionList, jobNames } from './executions';
import type { overview } from './overview';
import type { orchestrationDetail, orchestrationLeases, proposalDetail, proposalList } from './recovery';
import type { retryKeyList } from './retry-keys';
import type { searchResults } from './search';
import type {
  bulkReplayDetail,
  bulkReplayList,
  deadLetterGroupList,
  deadLetterList,
  receiptHistory,
  settlementQueue,
} from './settlements';
import type { webhookDeliveries } from './webhooks';
import type { needsYou } from './needs-you';
import type { rateCharts } from './rates';
import { readQuery } from './read-query';
import type { userList } from './users';

/**
 * The browser's handles on the reads (lib/reads/*.ts define them): each is the definition's
 * type and its path, checked equal by the compiler, so a view's key and URL are the ones the
 * page prefetched and the route answers. `import type` keeps the server out of the bundle.
 */

export const executionListQuery = /* @__PURE__ */ readQuery<typeof executionList>('/api/executions');
export const executionDetailQuery = /* @__PURE__ */ readQuery<typeof executionDetail>('/api/executions/[id]');
export const jobNamesQuery = /* @__PURE__ */ readQuery<typeof jobNames>('/api/job-names', { staleTime: 60_000 });
export const userListQuery = /* @__PURE__ */ readQuery<typeof userList>('/api/users');
export const auditListQuery = /* @__PURE__ */ readQuery<typeof auditList>('/api/audit');
export const overviewQuery = /* @__PURE__ */ readQuery<typeof overview>('/api/overview');
export const webhookDeliveriesQuery = /* @__PURE__ */ readQuery<typeof webhookDeliveries>('/api/webhooks/deliveries');
export const searchResultsQuery = /* @__PURE__ */ readQuery<typeof searchResults>('/api/search');
export const proposalListQuery = /* @__PURE__ */ readQuery<typeof proposalList>('/api/proposals');
export const proposalDetailQuery = /* @__PURE__ */ readQuery<typeof proposalDetail>('/api/proposals/[id]');
export const orchestrationLeasesQuery = /* @__PURE__ */ readQuery<typeof orchestrationLeases>('/api/orchestrations');
export const orchestrationDetailQuery =
  /* @__PURE__ */ readQuery<typeof orchestrationDetail>('/api/orchestrations/[id]');
export const retryKeyListQuery = /* @__PURE__ */ readQuery<typeof retryKeyList>('/api/retry-keys');
export const settlementQueueQuery = /* @__PURE__ */ readQuery<typeof settlementQueue>('/api/settlements/queue');
export const deadLetterListQuery = /* @__PURE__ */ readQuery<typeof deadLetterList>('/api/settlements/dead-letters');
export const deadLetterGroupsQuery = /* @__PURE__ */ readQuery<typeof deadLetterGroupList>(
  '/api/settlements/dead-letters/groups',
);
export const receiptHistoryQuery = /* @__PURE__ */ readQuery<typeof receiptHistory>(
  '/api/settlements/receipts/[receiptId]',
);
export const bulkReplayListQuery = /* @__PURE__ */ readQuery<typeof bulkReplayList>('/api/settlements/bulk-replays');
export const bulkReplayDetailQuery = /* @__PURE__ */ readQuery<typeof bulkReplayDetail>(
  '/api/settlements/bulk-replays/[id]',
);
export const rateChartsQuery = /* @__PURE__ */ readQuery<typeof rateCharts>('/api/rates');
// Pushed by the event stream as it changes (components/live/live-updates.tsx): never stale by age.
export const needsYouQuery = /* @__PURE__ */ readQuery<typeof needsYou>('/api/needs-you', { staleTime: Infinity });
