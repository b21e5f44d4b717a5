import 'server-only';
import { randomUUID } from 'node:crypto';
import { and, eq, like, sql } from 'drizzle-orm';
import type { KeelAuth } from '../auth/auth';
import { isRole, type Role } from '../domain/roles';
import type { DbOrTx } from '../db/client';
import { account, session, user } from '../db/schema/auth';
import { auditEvent } from '../db/schema/keel';
import { postgresAuditLog } from './audit-log';
import type {
  DirectoryUser,
  NewDirectoryUser,
  PasswordHasher,
  UserDirectory,
  UserPorts,
} from '../ports/user-directory';
import type { UnitOfWork } from '../ports/unit-of-work';
import { postgresUnitOfWork } from './unit-of-work';

const COLUMNS = {
  id: user.id,
  username: user.username,
  name: user.name,
  role: user.role,
  banned: user.banned,
  banReason: user.banReason,
  createdAt: user.createdAt,
};

type UserColumns = {
  id: string;
  username: string | null;
  name: string;
  role: string;
  banned: boolean | null;
  banReason: string | null;
  createdAt: Date;
};

function toDirectoryUser(row: UserColumns): DirectoryUser {
  // A role Keel does not know can only come from outside Keel; it is shown as the least privilege.
  const role: Role = isRole(row.role) ? row.role : 'viewer';
  return {
    id: row.id,
    username: row.username ?? '',
    name: row.name,
    role,
    disabled: row.banned === true,
    disabledReason: row.banReason,
    createdAt: row.createdAt,
  };
}

export function postgresUserDirectory(db: DbOrTx): UserDirectory {
  return {
    async beginManagement(actorId) {
      await db.execute(sql`select pg_advisory_xact_lock(hashtext('keel.user-management'))`);
      const [row] = await db.select({ role: user.role, banned: user.banned }).from(user).where(eq(user.id, actorId));
      return row ? { role: row.role, disabled: row.banned === true } : null;
    },

    async lockByUsername(username) {
      const [row] = await db.select(COLUMNS).from(user).where(eq(user.username, username)).for('update');
      return row ? toDirectoryUser(row) : null;
    },

    async create(input: NewDirectoryUser) {
      const id = randomUUID();
      // ON CONFLICT waits for a concurrent insert of the same username to finish, so
      // null means the name is taken by a committed row.
      const [row] = await db
        .insert(user)
        .values({
          id,
          name: input.name,
          // better-auth needs a unique email; Keel signs in by username, so it is a reserved-domain placeholder.
          email: `${input.username}@users.keel.invalid`,
          username: input.username,
          displayUsername: input.username,
          role: input.role,
          banned: false,
        })
        .onConflictDoNothing()
        .returning(COLUMNS);
      if (!row) return null;
      // The same credential row better-auth's admin createUser writes.
      await db.insert(account).values({
        id: randomUUID(),
        accountId: id,
        providerId: 'credential',
        userId: id,
        password: input.passwordHash,
      });
      return toDirectoryUser(row);
    },

    async setDisabled(userId, disabled, reason) {
      await db
        .update(user)
        .set({ banned: disabled, banReason: disabled ? reason : null, banExpires: null })
        .where(eq(user.id, userId));
    },

    async setRole(userId, role) {
      await db.update(user).set({ role }).where(eq(user.id, userId));
    },

    async endSessions(userId) {
      const ended = await db.delete(session).where(eq(session.userId, userId)).returning({ id: session.id });
      return ended.length;
    },

    async findAppliedOperation(operationId) {
      const [row] = await db
        .select({ action: auditEvent.action, actorId: auditEvent.actorId, username: auditEvent.targetId })
        .from(auditEvent)
        .where(
          and(
            eq(auditEvent.operationId, operationId),
            eq(auditEvent.outcome, 'APPLIED'),
            eq(auditEvent.targetKind, 'user'),
            like(auditEvent.action, 'user.%'),
          ),
        )
        .limit(1);
      return row ?? null;
    },
  };
}

export function postgresUserUnitOfWork(db: DbOrTx): UnitOfWork<UserPorts> {
  return postgresUnitOfWork(db, (tx) => ({ users: postgresUserDirectory(tx), audit: postgresAuditLog(tx) }));
}

/** better-auth's own hasher (scrypt, with the auth config's parameters), so sign-in verifies what we store. */
export function authPasswordHasher(auth: KeelAuth): PasswordHasher {
  return { hash: async (password) => (await auth.$context).password.hash(password) };
}
