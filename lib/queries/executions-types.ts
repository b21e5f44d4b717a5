import type { OwnerObservation } from '../domain/batch-status';
import type { CappedCount } from '../domain/cursor';

/** What the executions list returns: shared by the server query, the read API and the page. */
export interface ExecutionListItem {
  id: number;
  jobName: string;
  instanceId: number;
  status: string;
  attempt: number;
  version: number;
  updatedAt: string;
  stale: boolean;
  owner: OwnerObservation;
  stopRequested: boolean;
  failureCategory: string | null;
}

export interface ExecutionPage {
  items: ExecutionListItem[];
  nextCursor: string | null;
  total: CappedCount;
  serverNow: string;
  /** Set when the view runs without its index, under a statement timeout. */
  indexWarning: string | null;
}
