import type { z } from 'zod';
import type { auditFiltersSchema } from '../domain/audit-filters';
import type { NeedsYouView } from '../domain/needs-you';
import type { ratesQuerySchema } from '../domain/rates-query';
import type { searchQuerySchema } from '../domain/search';
import type { userListQuerySchema } from '../domain/users';
import type { webhookDeliveryQuerySchema } from '../domain/webhook-filters';
import type { AuditPage } from '../queries/audit-types';
import type { ExecutionDetailView } from '../queries/execution-detail-types';
import type { ExecutionPage, executionFiltersSchema } from '../queries/executions-types';
import type { OrchestrationDetail } from '../queries/orchestration-detail-types';
import type { OverviewView } from '../queries/overview-types';
import type { RatesPage } from '../queries/rates-types';
import type {
  OrchestrationLeasePage,
  orchestrationLeasesQuerySchema,
  ProposalDetail,
  ProposalPage,
  proposalFiltersSchema,
} from '../queries/recovery-types';
import type { RetryKeyListView, retryKeyFiltersSchema } from '../queries/retry-keys-types';
import type { SearchResults } from '../queries/search-types';
import type {
  BulkReplayDetail,
  BulkReplayListPage,
  bulkReplayItemsSchema,
  bulkReplayListSchema,
  DeadLetterGroups,
  DeadLetterPage,
  deadLetterFiltersSchema,
  QueuePage,
  queueFiltersSchema,
  ReceiptHistory,
} from '../queries/settlements-types';
import type { UserPage } from '../queries/users-types';
import type { WebhookPage } from '../queries/webhooks-types';
import { type ReadType, readQuery, type WithCursor } from './read-query';

/**
 * The browser's handles on the reads (lib/reads/*.ts define them): each declares its path, the
 * search params it takes and the data it answers with client-safe types only, so nothing of the
 * server reaches the bundle. test/unit/reads.test.ts holds each equal, for the type checker, to
 * its definition, so a view's key and URL are the ones the page prefetched and the route answers.
 */

export const executionListQuery =
  /* @__PURE__ */ readQuery<ReadType<'/api/executions', ExecutionPage, WithCursor<typeof executionFiltersSchema>>>(
    '/api/executions',
  );
export const executionDetailQuery =
  /* @__PURE__ */ readQuery<ReadType<'/api/executions/[id]', ExecutionDetailView | null>>('/api/executions/[id]');
export const jobNamesQuery = /* @__PURE__ */ readQuery<ReadType<'/api/job-names', string[]>>('/api/job-names', {
  staleTime: 60_000,
});
export const userListQuery =
  /* @__PURE__ */ readQuery<ReadType<'/api/users', UserPage, WithCursor<typeof userListQuerySchema>>>('/api/users');
export const auditListQuery =
  /* @__PURE__ */ readQuery<ReadType<'/api/audit', AuditPage, WithCursor<typeof auditFiltersSchema>>>('/api/audit');
export const overviewQuery = /* @__PURE__ */ readQuery<ReadType<'/api/overview', OverviewView>>('/api/overview');
export const webhookDeliveriesQuery =
  /* @__PURE__ */ readQuery<
    ReadType<'/api/webhooks/deliveries', WebhookPage, WithCursor<typeof webhookDeliveryQuerySchema>>
  >('/api/webhooks/deliveries');
export const searchResultsQuery =
  /* @__PURE__ */ readQuery<ReadType<'/api/search', SearchResults, z.input<typeof searchQuerySchema>>>('/api/search');
export const proposalListQuery =
  /* @__PURE__ */ readQuery<ReadType<'/api/proposals', ProposalPage, WithCursor<typeof proposalFiltersSchema>>>(
    '/api/proposals',
  );
export const proposalDetailQuery =
  /* @__PURE__ */ readQuery<ReadType<'/api/proposals/[id]', ProposalDetail | null>>('/api/proposals/[id]');
export const orchestrationLeasesQuery =
  /* @__PURE__ */ readQuery<
    ReadType<'/api/orchestrations', OrchestrationLeasePage, z.input<typeof orchestrationLeasesQuerySchema>>
  >('/api/orchestrations');
export const orchestrationDetailQuery =
  /* @__PURE__ */ readQuery<ReadType<'/api/orchestrations/[id]', OrchestrationDetail | null>>(
    '/api/orchestrations/[id]',
  );
export const retryKeyListQuery =
  /* @__PURE__ */ readQuery<ReadType<'/api/retry-keys', RetryKeyListView, WithCursor<typeof retryKeyFiltersSchema>>>(
    '/api/retry-keys',
  );
export const settlementQueueQuery =
  /* @__PURE__ */ readQuery<ReadType<'/api/settlements/queue', QueuePage, WithCursor<typeof queueFiltersSchema>>>(
    '/api/settlements/queue',
  );
export const deadLetterListQuery = /* @__PURE__ */ readQuery<
  ReadType<'/api/settlements/dead-letters', DeadLetterPage, WithCursor<typeof deadLetterFiltersSchema>>
>('/api/settlements/dead-letters');
export const deadLetterGroupsQuery = /* @__PURE__ */ readQuery<
  ReadType<'/api/settlements/dead-letters/groups', DeadLetterGroups, z.input<typeof deadLetterFiltersSchema>>
>('/api/settlements/dead-letters/groups');
export const receiptHistoryQuery = /* @__PURE__ */ readQuery<
  ReadType<'/api/settlements/receipts/[receiptId]', ReceiptHistory | null>
>('/api/settlements/receipts/[receiptId]');
export const bulkReplayListQuery = /* @__PURE__ */ readQuery<
  ReadType<'/api/settlements/bulk-replays', BulkReplayListPage, WithCursor<typeof bulkReplayListSchema>>
>('/api/settlements/bulk-replays');
export const bulkReplayDetailQuery = /* @__PURE__ */ readQuery<
  ReadType<'/api/settlements/bulk-replays/[id]', BulkReplayDetail | null, z.input<typeof bulkReplayItemsSchema>>
>('/api/settlements/bulk-replays/[id]');
export const rateChartsQuery =
  /* @__PURE__ */ readQuery<ReadType<'/api/rates', RatesPage, z.input<typeof ratesQuerySchema>>>('/api/rates');
// Pushed by the event stream as it changes (components/live/live-updates.tsx): never stale by age.
export const needsYouQuery = /* @__PURE__ */ readQuery<ReadType<'/api/needs-you', NeedsYouView>>('/api/needs-you', {
  staleTime: Infinity,
});
