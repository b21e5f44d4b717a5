import type { CappedCount } from '../domain/cursor';

// The audit log's rows and page as the browser receives them: client-safe, so components may import them.

export interface AuditEventView {
  id: number;
  /** ISO 8601 UTC with the database's microseconds. */
  at: string;
  actorLogin: string;
  actorRole: string;
  action: string;
  targetKind: string;
  targetId: string;
  reason: string | null;
  outcome: string;
  code: string | null;
  digest: string | null;
  operationId: string | null;
  requestId: string | null;
  /** What the event recorded before and after the change (jsonb), for the change column and the CSV. */
  before: unknown;
  after: unknown;
}

export interface AuditPage {
  rows: AuditEventView[];
  count: CappedCount;
  /** Older rows, or null on the last page. */
  nextCursor: string | null;
  /** Newer rows, or null on the first page. */
  prevCursor: string | null;
  /** The database's clock, for relative times. */
  serverNow: string;
}
