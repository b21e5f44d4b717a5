import 'server-only';
import { isRole, mayTake, type ActionName } from '../domain/roles';
import type { Actor } from '../domain/actor';
import type { ErrorCode } from '../domain/error-code';
import { ok } from '../domain/result';
import type { ChangeUserRoleInput, CreateUserInput, SetUserDisabledInput } from '../domain/users';
import type { AuditEventInput } from '../ports/audit-log';
import type { DirectoryUser, PasswordHasher, UserPorts } from '../ports/user-directory';
import type { UnitOfWork } from '../ports/unit-of-work';
import { refuse, serviceError, transact, type RefusalEvent, type ServiceResult } from './kernel';

/**
 * User management (docs/design.md#users): create, disable or enable, change role. Each use
 * case runs in one transaction with its audit event; a refusal commits its audit
 * event and nothing else. Repeating a request whose effect already holds changes
 * nothing and writes no second event, so a double submit is harmless.
 */

export interface UserServicePorts {
  unitOfWork: UnitOfWork<UserPorts>;
  passwords: PasswordHasher;
}

type AuditFields = Omit<AuditEventInput, 'actor' | 'target' | 'outcome' | 'code' | 'requestId' | 'action'>;

/** One request about one user: its audit events name the action and the user. */
interface UserRequest extends RefusalEvent {
  action: ActionName;
}

const userRequest = (actor: Actor, action: ActionName, username: string): UserRequest => ({
  actor,
  action,
  target: { kind: 'user', id: username },
});

const recordApplied = (tx: UserPorts, request: UserRequest, fields: AuditFields) =>
  tx.audit.record({ ...request, ...fields, outcome: 'APPLIED' });

/** Refuses through the kernel (lib/services/kernel.ts); the event's reason is the message unless `fields` names one. */
function refuseUser(request: UserRequest, code: ErrorCode, message: string, fields: Partial<AuditFields> = {}): never {
  return refuse(serviceError(code, message), { ...request, ...fields, reason: fields.reason ?? message });
}

/**
 * Takes the user-management lock, then checks the acting admin again under it: two
 * admins disabling or demoting each other at once are serialized, and the second
 * finds they no longer may, so Keel never loses its last active admin.
 */
async function assertActingAdmin(tx: UserPorts, request: UserRequest): Promise<void> {
  const acting = await tx.users.beginManagement(request.actor.id);
  if (acting && !acting.disabled && isRole(acting.role) && mayTake(acting.role, request.action)) return;
  const message = 'Your account may no longer manage users (it was disabled or its role changed).';
  refuseUser(request, 'FORBIDDEN', message);
}

const notFound = (request: UserRequest, username: string): never =>
  refuseUser(request, 'NOT_FOUND', `There is no user named ${username}.`);

export async function createUser(
  ports: UserServicePorts,
  actor: Actor,
  input: CreateUserInput,
): Promise<ServiceResult<{ user: DirectoryUser; created: boolean }>> {
  // Hashing is deliberately slow: do it before the transaction takes any lock.
  const passwordHash = await ports.passwords.hash(input.password);
  const request = userRequest(actor, 'user.create', input.username);
  return transact(ports.unitOfWork, async (tx) => {
    await assertActingAdmin(tx, request);
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
      refuseUser(request, 'USER_EXISTS', `A user named ${input.username} already exists.`, {
        operationId: input.operationId ?? null,
      });
    }
    await recordApplied(tx, request, {
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
): Promise<ServiceResult<{ user: DirectoryUser; changed: boolean; sessionsEnded: number }>> {
  const request = userRequest(actor, input.disabled ? 'user.disable' : 'user.enable', input.username);
  return transact(ports.unitOfWork, async (tx) => {
    await assertActingAdmin(tx, request);
    const user = await tx.users.lockByUsername(input.username);
    if (!user) return notFound(request, input.username);
    if (input.disabled && user.id === actor.id)
      refuseUser(request, 'CANNOT_DISABLE_SELF', 'You cannot disable your own account; ask another admin.');
    if (user.disabled === input.disabled) {
      // Already so; still end any session, in case one was made before the flag was set elsewhere.
      const sessionsEnded = input.disabled ? await tx.users.endSessions(user.id) : 0;
      if (sessionsEnded > 0) {
        await recordApplied(tx, request, {
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
    await recordApplied(tx, request, {
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
): Promise<ServiceResult<{ user: DirectoryUser; changed: boolean }>> {
  const request = userRequest(actor, 'user.role', input.username);
  return transact(ports.unitOfWork, async (tx) => {
    await assertActingAdmin(tx, request);
    const user = await tx.users.lockByUsername(input.username);
    if (!user) return notFound(request, input.username);
    if (user.id === actor.id && input.role !== 'admin') {
      // With this rule (and the lock above) the acting admin always remains an admin.
      const message = 'You cannot take the admin role from yourself; ask another admin.';
      refuseUser(request, 'CANNOT_DEMOTE_SELF', message, { after: { role: input.role } });
    }
    if (user.role === input.role) return ok({ user, changed: false });
    if (user.role !== input.expectedRole) {
      const message = `${user.username} is now ${user.role}, not ${input.expectedRole}; reload and decide again.`;
      refuseUser(request, 'ROLE_CHANGED', message, { before: { role: user.role }, after: { role: input.role } });
    }
    await tx.users.setRole(user.id, input.role);
    await recordApplied(tx, request, { before: { role: user.role }, after: { role: input.role } });
    return ok({ user: { ...user, role: input.role }, changed: true });
  });
}
