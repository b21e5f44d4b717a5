import 'server-only';
import type { DbOrTx } from '../db/client';
import { auditEvent } from '../db/schema/keel';
import type { AuditEventInput, AuditLog } from '../ports/audit-log';
import { requestIdOrNew } from '../observability/request-context';

export function postgresAuditLog(db: DbOrTx): AuditLog {
  return {
    async record(event: AuditEventInput) {
      if ((event.outcome === 'REFUSED') !== Boolean(event.code)) {
        throw new Error('an audit event carries a code exactly when it is REFUSED');
      }
      const [row] = await db
        .insert(auditEvent)
        .values({
          actorId: event.actor.id,
          actorLogin: event.actor.login,
          actorRole: event.actor.role,
          action: event.action,
          targetKind: event.target.kind,
          targetId: event.target.id,
          reason: event.reason ?? null,
          before: event.before ?? null,
          after: event.after ?? null,
          digest: event.digest ?? null,
          operationId: event.operationId ?? null,
          outcome: event.outcome,
          code: event.code ?? null,
          // Every event names its request: the caller's, the ambient one, or a fresh id for work outside a request.
          requestId: event.requestId ?? requestIdOrNew(),
        })
        .returning({ id: auditEvent.id });
      if (!row) throw new Error('audit insert returned no row');
      return row;
    },
  };
}
