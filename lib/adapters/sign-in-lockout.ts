import 'server-only';
import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { Database } from '../db/client';
import { signInLockout } from '../db/schema/auth';
import { auditEvent } from '../db/schema/keel';
import { afterFailure, lockRemainingMs, NO_LOCKOUT, type LockoutState } from '../domain/sign-in-lockout';
import type { SignInLockout } from '../ports/sign-in-lockout';

/** Who signs in is not known yet: sign-in audit rows name the username typed as their target. */
const ANONYMOUS = { actorId: null, actorLogin: 'anonymous', actorRole: 'anonymous' } as const;

/** The lockout state in Postgres, so every Keel process behind one database sees the same lock. */
export function postgresSignInLockout(db: Database): SignInLockout {
  return {
    async refuseIfLocked(username, now, requestId = null) {
      const [row] = await db
        .select({ lockedUntil: signInLockout.lockedUntil })
        .from(signInLockout)
        .where(eq(signInLockout.username, username));
      const remaining = row ? lockRemainingMs({ ...NO_LOCKOUT, lockedUntil: row.lockedUntil }, now) : 0;
      if (remaining > 0) {
        await db.insert(auditEvent).values({
          ...ANONYMOUS,
          action: 'auth.sign_in',
          targetKind: 'user',
          targetId: username,
          after: { lockedForSeconds: Math.ceil(remaining / 1000) },
          outcome: 'REFUSED',
          code: 'ACCOUNT_LOCKED',
          requestId: requestId ?? randomUUID(),
        });
      }
      return remaining;
    },

    async recordFailure(username, now, requestId = null) {
      return db.transaction(async (tx) => {
        await tx.insert(signInLockout).values({ username }).onConflictDoNothing();
        const [row] = await tx
          .select({
            failures: signInLockout.failures,
            lockouts: signInLockout.lockouts,
            lastFailureAt: signInLockout.lastFailureAt,
            lockedUntil: signInLockout.lockedUntil,
          })
          .from(signInLockout)
          .where(eq(signInLockout.username, username))
          .for('update');
        const current: LockoutState = row ?? NO_LOCKOUT;
        const next = afterFailure(current, now);
        await tx.update(signInLockout).set(next.state).where(eq(signInLockout.username, username));
        if (next.locked) {
          await tx.insert(auditEvent).values({
            ...ANONYMOUS,
            action: 'auth.lockout',
            targetKind: 'user',
            targetId: username,
            after: { lockedForSeconds: next.lockMs / 1000, lockouts: next.state.lockouts },
            outcome: 'REFUSED',
            code: 'ACCOUNT_LOCKED',
            requestId: requestId ?? randomUUID(),
          });
        }
        return { locked: next.locked, lockMs: next.lockMs };
      });
    },

    async recordSuccess(username) {
      await db.delete(signInLockout).where(eq(signInLockout.username, username));
    },
  };
}
