import type { CappedCount } from '../domain/cursor';

// The user directory's rows and page as the browser receives them: client-safe, so components may import them.

export interface UserView {
  id: string;
  username: string;
  name: string;
  role: string;
  /** The role is one Keel knows; an unknown one (set outside Keel) cannot sign in. */
  knownRole: boolean;
  disabled: boolean;
  disabledReason: string | null;
  /** ISO 8601 UTC. */
  createdAt: string;
  /**
   * Bulk jobs running in this user's name: a disable, or a role
   * without replaySettlement, cancels them at their next batch.
   */
  runningBulkJobs: number;
}

export interface UserPage {
  rows: UserView[];
  count: CappedCount;
  nextCursor: string | null;
  serverNow: string;
}
