import 'server-only';
import { randomUUID } from 'node:crypto';
import type { Database } from '../db/client';
import { auditEvent } from '../db/schema/keel';
import { OIDC_PROVIDER_ID } from '../config/oidc';

/** Who tried is not known when the callback is refused: the row names the provider as its target. */
export function postgresSsoRefusals(db: Database) {
  return async (code: string, requestId: string | null): Promise<void> => {
    await db.insert(auditEvent).values({
      actorId: null,
      actorLogin: 'anonymous',
      actorRole: 'anonymous',
      action: 'auth.sso_sign_in',
      targetKind: 'sso_provider',
      targetId: OIDC_PROVIDER_ID,
      outcome: 'REFUSED',
      code,
      requestId: requestId ?? randomUUID(),
    });
  };
}
