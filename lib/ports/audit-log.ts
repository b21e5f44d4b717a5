import type { Actor } from '../domain/actor';

export type AuditOutcome = 'APPLIED' | 'REFUSED';

/** One row of `keel.audit_event` (docs/design.md#audit): who did what to which target, and how it ended. */
export interface AuditEventInput {
  actor: Pick<Actor, 'id' | 'login' | 'role'>;
  action: string;
  target: { kind: string; id: string };
  reason?: string | null;
  before?: unknown;
  after?: unknown;
  digest?: string | null;
  operationId?: string | null;
  outcome: AuditOutcome;
  /** The refusal code (SCREAMING_SNAKE); required exactly when REFUSED. */
  code?: string | null;
  requestId?: string | null;
}

/**
 * The append-only audit log. Bound to a transaction, so an event commits with the
 * change it describes, or, for a refusal, on its own.
 */
export interface AuditLog {
  record(event: AuditEventInput): Promise<{ id: number }>;
}
