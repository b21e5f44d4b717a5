import 'server-only';
import { isRole, mayTake, type ActionName } from '../domain/roles';
import type { Actor } from '../domain/actor';
import { err, ok, type Result } from '../domain/result';
import type { ChangeUserRoleInput, CreateUserInput, SetUserDisabledInput } from '../domain/users';
import type { AuditEventInput } from '../ports/audit-log';
import type { DirectoryUser, PasswordHasher, UserPorts } from '../ports/user-directory';
import type { UnitOfWork } from '../ports/unit-of-work';

/**
 * User management (docs/design.md#users): create, disable or enable, change role. Each use
 * case runs in one transaction with its audit event; a refusal commits its audit
 * event and nothing else. Repeating a request whose effect already holds changes
 * nothing and writes no second event, so a double submit is harmless.
 */

export type UserErrorCode =
  | 'FORBIDDEN'
  | 'USER_EXISTS'
  | 'NOT_FOUND'
  | 'CANNOT_DISABLE_SELF'
  | 'CANNOT_DEMOTE_SELF'
  | 'ROLE_CHANGED';
export interface UserError {
  code: UserErrorCode;
  message: string;
}

export interface UserServicePorts {
  unitOfWork: UnitOfWork<UserPorts>;
  passwords: PasswordHasher;
}

export interface RequestContext {
  requestId?: string;
}

type AuditFields = Omit<AuditEventInput, 'actor' | 'target' | 'outcome' | 'code' | 'requestId'>;

function auditor(ports: UserPorts, actor: Actor, username: string, context: RequestContext) {
  const base = { actor, target: { kind: 'user', id: username }, requestId: context.requestId ?? null };
  return {
    applied: (fields: AuditFields) => ports.audit.record({ ...base, ...fields, outcome: 'APPLIED' }),
    async refuse(
      action: string,
      error: UserError,
      fields: Partial<AuditFields> = {},
    ): Promise<{ ok: false; error: UserError }> {
      await ports.audit.record({
        ...base,
        ...fields,
        action,
        outcome: 'REFUSED',
        code: error.code,
        reason: fields.reason ?? error.message,
      });
      return err(error);
    },
  };
}

/**
 * Takes the user-management lock, then checks the acting admin again under it: two
 * admins disabling or demoting each other at once are serialized, and the second
 * finds they no longer may, so Keel never loses its last active admin.
 */
async function actingAdminRefusal(tx: UserPorts, actor: Actor, action: ActionName): Promise<UserError | null> {
  const acting = await tx.users.beginManagement(actor.id);
  if (acting && !acting.disabled && isRole(acting.role) && mayTake(acting.role, action)) return null;
  return {
    code: 'FORBIDDEN',
    message: 'Your account may no longer manage users (it was disabled or its role changed).',
  };
}

const notFound = (username: string): UserError => ({
  code: 'NOT_FOUND',
  message: `There is no user named ${username}.`,
});

export async function createUser(
  ports: UserServicePorts,
  actor: Actor,
  input: CreateUserInput,
  context: RequestContext = {},
): Promise<Result<{ user: DirectoryUser; created: boolean }, UserError>> {
  // Hashing is deliberately slow: do it before the transaction takes any lock.
  const passwordHash = await ports.passwords.hash(input.password);
  return ports.unitOfWork.transaction(async (tx) => {
    const audit = auditor(tx, actor, input.username, context);
    const forbidden = await actingAdminRefusal(tx, actor, 'user.create');
    if (forbidden) return audit.refuse('user.create', forbidden);
    const repeated = async () => {
      if (!input.operationId) return null;
      const earlier = await tx.users.findAppliedOperation(input.operationId);
      if (earlier?.action !== 'user.create' || earlier.actorId !== actor.id || earlier.username !== input.username)
        return null;
      const user = await tx.users.lockByUsername(input.username);
      return user ? ok({ user, created: false }) : null;
    };
    const earlier = await repeated();
    if (earlier) return earlier;
    const user = await tx.users.create({ username: input.username, name: input.name, role: input.role, passwordHash });
    if (!user) {
      // A concurrent submit of this same form may have just committed it.
      const concurrent = await repeated();
      if (concurrent) return concurrent;
      return audit.refuse(
        'user.create',
        { code: 'USER_EXISTS', message: `A user named ${input.username} already exists.` },
        { operationId: input.operationId ?? null },
      );
    }
    await audit.applied({
      action: 'user.create',
      after: { username: user.username, name: user.name, role: user.role },
      operationId: input.operationId ?? null,
    });
    return ok({ user, created: true });
  });
}

export async function setUserDisabled(
  ports: Pick<UserServicePorts, 'unitOfWork'>,
  actor: Actor,
  input: SetUserDisabledInput,
  context: RequestContext = {},
): Promise<Result<{ user: DirectoryUser; changed: boolean; sessionsEnded: number }, UserError>> {
  const action = input.disabled ? 'user.disable' : 'user.enable';
  return ports.unitOfWork.transaction(async (tx) => {
    const audit = auditor(tx, actor, input.username, context);
    const forbidden = await actingAdminRefusal(tx, actor, action);
    if (forbidden) return audit.refuse(action, forbidden);
    const user = await tx.users.lockByUsername(input.username);
    if (!user) return audit.refuse(action, notFound(input.username));
    if (input.disabled && user.id === actor.id) {
      return audit.refuse(action, {
        code: 'CANNOT_DISABLE_SELF',
        message: 'You cannot disable your own account; ask another admin.',
      });
    }
    if (user.disabled === input.disabled) {
      // Already so; still end any session, in case one was made before the flag was set elsewhere.
      const sessionsEnded = input.disabled ? await tx.users.endSessions(user.id) : 0;
      if (sessionsEnded > 0) {
        await audit.applied({
          action,
          reason: input.reason ?? null,
          before: { disabled: true },
          after: { disabled: true, sessionsEnded },
        });
      }
      return ok({ user, changed: false, sessionsEnded });
    }
    const reason = input.disabled ? (input.reason ?? null) : null;
    await tx.users.setDisabled(user.id, input.disabled, reason);
    // Sessions go in the same transaction, so a disabled user is signed out the moment it commits.
    const sessionsEnded = input.disabled ? await tx.users.endSessions(user.id) : 0;
    await audit.applied({
      action,
      reason: input.reason ?? null,
      before: { disabled: user.disabled },
      after: input.disabled ? { disabled: true, sessionsEnded } : { disabled: false },
    });
    return ok({ user: { ...user, disabled: input.disabled, disabledReason: reason }, changed: true, sessionsEnded });
  });
}

export async function changeUserRole(
  ports: Pick<UserServicePorts, 'unitOfWork'>,
  actor: Actor,
  input: ChangeUserRoleInput,
  context: RequestContext = {},
): Promise<Result<{ user: DirectoryUser; changed: boolean }, UserError>> {
  return ports.unitOfWork.transaction(async (tx) => {
    const audit = auditor(tx, actor, input.username, context);
    const forbidden = await actingAdminRefusal(tx, actor, 'user.role');
    if (forbidden) return audit.refuse('user.role', forbidden);
    const user = await tx.users.lockByUsername(input.username);
    if (!user) return audit.refuse('user.role', notFound(input.username));
    if (user.id === actor.id && input.role !== 'admin') {
      // With this rule (and the lock above) the acting admin always remains an admin.
      return audit.refuse(
        'user.role',
        { code: 'CANNOT_DEMOTE_SELF', message: 'You cannot take the admin role from yourself; ask another admin.' },
        { after: { role: input.role } },
      );
    }
    if (user.role === input.role) return ok({ user, changed: false });
    if (user.role !== input.expectedRole) {
      return audit.refuse(
        'user.role',
        {
          code: 'ROLE_CHANGED',
          message: `${user.username} is now ${user.role}, not ${input.expectedRole}; reload and decide again.`,
        },
        { before: { role: user.role }, after: { role: input.role } },
      );
    }
    await tx.users.setRole(user.id, input.role);
    await audit.applied({ action: 'user.role', before: { role: user.role }, after: { role: input.role } });
    return ok({ user: { ...user, role: input.role }, changed: true });
  });
}
