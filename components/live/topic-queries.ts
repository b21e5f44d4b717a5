import type { QueryKey } from '@tanstack/react-query';
import type { LiveTopic } from '@/lib/domain/live-topics';
import { queryKeys } from '@/lib/query-keys';

/**
 * The queries a live topic can change. Invalidation refetches only the ones a page
 * has mounted, so one event costs an open tab one read of what it shows.
 */
export const TOPIC_QUERIES: Readonly<Record<LiveTopic, readonly QueryKey[]>> = {
  executions: [queryKeys.executions.all, queryKeys.retryKeys.all, queryKeys.overview()],
  proposals: [queryKeys.proposals.all, queryKeys.orchestrations.all, queryKeys.executions.all, queryKeys.overview()],
  settlements: [queryKeys.settlements.all, queryKeys.overview()],
  // The rates' markers are audit events.
  audit: [queryKeys.audit.all, queryKeys.rates.all],
  users: [queryKeys.users.all],
  webhooks: [queryKeys.webhooks.all],
  // Each sample comes with a rollup pass of the rates.
  metrics: [queryKeys.overview(), queryKeys.rates.all],
};
