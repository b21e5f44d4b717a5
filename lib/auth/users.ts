import { err, ok, type Result } from '../domain/result';
import type { KeelAuth } from './auth';
import { BREAK_GLASS_PREFIX, NEW_USER_MESSAGES, SSO_USERNAME_PREFIX } from '../domain/new-user-check';
import { isRole, type Role } from '../domain/roles';

export interface NewUser {
  username: string;
  name: string;
  role: Role;
  password: string;
  email?: string;
  /** Made by `keel create-user --break-glass`: the only kind of username that may start `breakglass.`. */
  breakGlass?: boolean;
}

export type NewUserError =
  | { code: 'INVALID_USERNAME'; message: string }
  | { code: 'INVALID_ROLE'; message: string }
  | { code: 'WEAK_PASSWORD'; message: string }
  | { code: 'USER_EXISTS'; message: string };

const USERNAME = /^[a-z0-9_.]{2,64}$/;

/** Makes a sign-in account with a role, through the auth library so the password is hashed its way. */
export async function createUserAccount(auth: KeelAuth, input: NewUser): Promise<Result<{ id: string }, NewUserError>> {
  const username = input.username.trim().toLowerCase();
  if (!USERNAME.test(username)) {
    return err({ code: 'INVALID_USERNAME', message: 'Usernames are 2 to 64 of a-z, 0-9, "_" and ".".' });
  }
  // `sso.` names belong to single sign-on users, so a local user never takes an SSO user's name.
  if (username.startsWith(SSO_USERNAME_PREFIX)) {
    return err({ code: 'INVALID_USERNAME', message: NEW_USER_MESSAGES.ssoPrefix });
  }
  if (username.startsWith(BREAK_GLASS_PREFIX) !== (input.breakGlass === true)) {
    return err({
      code: 'INVALID_USERNAME',
      message: input.breakGlass
        ? `Break-glass usernames start "${BREAK_GLASS_PREFIX}".`
        : NEW_USER_MESSAGES.breakGlassPrefix,
    });
  }
  if (!isRole(input.role)) return err({ code: 'INVALID_ROLE', message: `Unknown role: ${String(input.role)}` });
  // The admin API does not apply the minimum length itself.
  if (input.password.length < 8 || input.password.length > 128) {
    return err({ code: 'WEAK_PASSWORD', message: 'Passwords are 8 to 128 characters.' });
  }
  try {
    const created = await auth.api.createUser({
      body: {
        email: input.email ?? `${username}@users.keel.invalid`,
        password: input.password,
        name: input.name,
        role: input.role as 'admin',
        data: { username },
      },
    });
    return ok({ id: created.user.id });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (/exist/i.test(message))
      return err({ code: 'USER_EXISTS', message: `A user named ${username} already exists.` });
    throw error;
  }
}
