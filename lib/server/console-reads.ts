import 'server-only';
import { can, type Role } from '../domain/roles';
import { readExecutionDetail } from '../queries/execution-detail';
import { listJobNames } from '../queries/executions';
import { assessBatchCandidate, type CandidateAssessment } from '../services/propose-recovery';
import { recoveryDeps } from './composition-root';
import { readOverview } from '../queries/overview';
import { listRetryKeys } from '../queries/retry-keys';
import type { FailureCategory, FaultPhase } from '../domain/batch-status';
import { listExecutions, type ExecutionFilters } from '../queries/executions';
import {
  deadLetterGroups,
  listDeadLetterPage,
  listSettlementQueue,
  type SettlementReadOptions,
} from '../queries/settlements';
import type { DeadLetterFilters, QueueFilters } from '../queries/settlements-types';
import { readLastSample } from '../queries/last-sample';
import type { Database } from '../db/client';
import { listDb } from './read-source';
import { openRetryKeyCursor, sealRetryKeyCursor } from './retry-key-cursor';
import { runtime } from './composition-root';

/**
 * Reads whose answer the read API shapes beyond the query itself. A page prefetches
 * with the same function its API route answers with, so the hydrated data and a
 * later refetch cannot differ in shape.
 */

/**
 * The primary, for the reads an action is taken from: detail pages (an execution, a
 * proposal, a receipt, a bulk job), users. Lists read through `listDb()`
 * (lib/server/read-source.ts), which may be the streaming replica.
 */
export const primaryDb = (): Database => runtime().db;

export async function overviewPage() {
  const { db, settings } = runtime();
  const overview = await readOverview(db);
  return {
    ...overview,
    serverNow: overview.serverNow.toISOString(),
    sampledAt: overview.sampledAt?.toISOString() ?? null,
    staleThresholdMs: settings.staleThresholdMs,
  };
}

export interface RetryKeysQuery {
  job?: string;
  phase?: FaultPhase;
  category?: FailureCategory;
  executionId?: number;
  only?: 'keys' | 'corrupt';
  cursor?: string;
  limit?: number;
}

/** `query.cursor` has passed `retryKeyCursorText()` (the route's and the page's schemas), so it opens. */
export async function retryKeysPage(query: RetryKeysQuery) {
  const after = openRetryKeyCursor(query.cursor);
  if (!after.ok) throw new Error('retryKeysPage was given a cursor its schema did not check');
  const page = await listRetryKeys(await listDb(), { ...query, after: after.value });
  return { rows: page.rows, nextCursor: page.nextCursor ? sealRetryKeyCursor(page.nextCursor) : null };
}

export const jobNames = async () => listJobNames(await listDb());

/** The executions list, as its page and GET /api/executions show it. */
export async function executionsPage(filters: ExecutionFilters) {
  const { settings, ownerToken } = runtime();
  return listExecutions(await listDb(), filters, { staleThresholdMs: settings.staleThresholdMs, ownerToken });
}

export const settlementQueuePage = async (filters: QueueFilters) => listSettlementQueue(await listDb(), filters);
export const deadLettersPage = async (filters: DeadLetterFilters, options?: SettlementReadOptions) =>
  listDeadLetterPage(await listDb(), filters, options);
export const deadLetterGroupsPage = async (filters: DeadLetterFilters, options?: SettlementReadOptions) =>
  deadLetterGroups(await listDb(), filters, options);

/**
 * The clock and the sampler's last figures, read once for a page that renders two
 * views (the dead letters and their groups), so both measure ages alike.
 */
export const settlementReadContext = async (): Promise<SettlementReadOptions> => {
  const sample = await readLastSample(await listDb());
  return { nowMs: sample.nowMs, sample };
};

/**
 * An execution's detail, and for a role that may propose, whether a takeover may be
 * requested (or the rule it fails), so the page's buttons follow the data.
 */
export async function executionDetailPage(id: number, role: Role) {
  const { settings, ownerToken } = runtime();
  const detail = await readExecutionDetail(primaryDb(), id, {
    staleThresholdMs: settings.staleThresholdMs,
    ownerToken,
  });
  if (!detail) return null;
  const pending = detail.proposals.some((p) => p.status === 'PENDING');
  const candidacy: CandidateAssessment =
    can(role, 'proposeRecovery') && !pending
      ? await assessBatchCandidate(recoveryDeps(), detail.id)
      : { candidate: false, code: null, message: null };
  return { ...detail, candidacy };
}
