import 'server-only';
import { eq } from 'drizzle-orm';
import type { DbOrTx } from '../db/client';
import { user } from '../db/schema/auth';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { PreferencePorts, UserPreferences } from '../ports/user-preferences';
import { postgresAuditLog } from './audit-log';
import { postgresUnitOfWork } from './unit-of-work';

export function postgresUserPreferences(db: DbOrTx): UserPreferences {
  return {
    async lockTimeZone(userId) {
      const [row] = await db.select({ timeZone: user.timeZone }).from(user).where(eq(user.id, userId)).for('update');
      return row?.timeZone ?? null;
    },
    async setTimeZone(userId, preference) {
      await db.update(user).set({ timeZone: preference, updatedAt: new Date() }).where(eq(user.id, userId));
    },
  };
}

/** A preference change and its audit event, in one transaction. */
export function postgresPreferenceUnitOfWork(db: DbOrTx): UnitOfWork<PreferencePorts> {
  return postgresUnitOfWork(db, (tx) => ({ preferences: postgresUserPreferences(tx), audit: postgresAuditLog(tx) }));
}
