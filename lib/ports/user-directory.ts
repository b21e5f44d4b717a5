import type { Role } from '../domain/roles';
import type { AuditLog } from './audit-log';

/** A sign-in account as user management sees it; never its password hash. */
export interface DirectoryUser {
  id: string;
  username: string;
  name: string;
  role: Role;
  disabled: boolean;
  disabledReason: string | null;
  createdAt: Date;
}

export interface NewDirectoryUser {
  username: string;
  name: string;
  role: Role;
  /** Already hashed by the PasswordHasher; the plain password never reaches a port. */
  passwordHash: string;
}

/** An earlier applied user operation, found by its operation id in the audit log. */
export interface AppliedUserOperation {
  action: string;
  actorId: string | null;
  username: string;
}

/** `keel.user`, `keel.account` and `keel.session` for user management (docs/design.md#users). */
export interface UserDirectory {
  /**
   * Serializes user management (a transaction-scoped lock) and returns the acting
   * user's current role and state, read under that lock.
   */
  beginManagement(actorId: string): Promise<{ role: string; disabled: boolean } | null>;
  /** Locks the user's row (FOR UPDATE) for the rest of the transaction. */
  lockByUsername(username: string): Promise<DirectoryUser | null>;
  /**
   * Inserts the user and their password credential. Null when the username is taken,
   * after any concurrent insert of it has committed or rolled back.
   */
  create(user: NewDirectoryUser): Promise<DirectoryUser | null>;
  setDisabled(userId: string, disabled: boolean, reason: string | null): Promise<void>;
  setRole(userId: string, role: Role): Promise<void>;
  /** Deletes every session of the user, so they are signed out at once; returns how many ended. */
  endSessions(userId: string): Promise<number>;
  findAppliedOperation(operationId: string): Promise<AppliedUserOperation | null>;
}

/** Hashes passwords the way sign-in verifies them. */
export interface PasswordHasher {
  hash(password: string): Promise<string>;
}

export interface UserPorts {
  users: UserDirectory;
  audit: AuditLog;
}
