import { isRole, type Role } from './roles';
import { TEXT_PROBLEM_MESSAGES, textProblem } from './text-problem';

/**
 * The create-user form's own check, before it asks for confirmation: the rules and
 * messages of createUserSchema (lib/domain/users.ts, which the server action parses
 * with and which takes its messages from here) without zod, so the users page does not
 * download zod for one form. test/unit/new-user-check.test.ts holds the two equal.
 * The form's operation id is the page's own UUID; only the server checks it.
 */
export const USERNAME_PATTERN = /^[a-z0-9_.]{2,64}$/;
export const NAME_MAX_LENGTH = 200;
export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 128;

/** Usernames of users made by single sign-on start with this; local users may not. */
export const SSO_USERNAME_PREFIX = 'sso.';
/** Local usernames reserved for the CLI's break-glass accounts, still allowed with KEEL_LOCAL_SIGN_IN=0. */
export const BREAK_GLASS_PREFIX = 'breakglass.';

export const NEW_USER_MESSAGES = {
  username: 'Usernames are 2 to 64 of a-z, 0-9, "_" and ".".',
  ssoPrefix: `Usernames starting "${SSO_USERNAME_PREFIX}" are kept for single sign-on users.`,
  breakGlassPrefix: `Usernames starting "${BREAK_GLASS_PREFIX}" are made only by the CLI's create-user --break-glass.`,
  nameRequired: 'Give a name.',
  nameTooLong: `Names are at most ${NAME_MAX_LENGTH} characters.`,
  role: 'Choose a role.',
  password: `Passwords are ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters.`,
} as const;

/**
 * Why a username (already trimmed and lower-cased) may not be given to a user made in
 * the console, or null: single sign-on and the CLI's break-glass accounts own their prefixes.
 */
export function reservedUsernameMessage(username: string): string | null {
  if (username.startsWith(SSO_USERNAME_PREFIX)) return NEW_USER_MESSAGES.ssoPrefix;
  if (username.startsWith(BREAK_GLASS_PREFIX)) return NEW_USER_MESSAGES.breakGlassPrefix;
  return null;
}

export interface NewUserFields {
  username: string;
  name: string;
  role: Role;
}

export type NewUserCheck = { ok: true; value: NewUserFields } | { ok: false; errors: Record<string, string[]> };

/**
 * The form's fields as typed (FormData's strings): the cleaned fields, or each field's messages in the schema's order.
 */
export function checkNewUser(form: {
  username?: unknown;
  name?: unknown;
  role?: unknown;
  password?: unknown;
}): NewUserCheck {
  const errors: Record<string, string[]> = {};
  const add = (field: string, message: string) => (errors[field] ??= []).push(message);
  const text = (value: unknown) => (typeof value === 'string' ? value : '');

  const username = text(form.username).trim().toLowerCase();
  if (!USERNAME_PATTERN.test(username)) add('username', NEW_USER_MESSAGES.username);
  const reserved = reservedUsernameMessage(username);
  if (reserved) add('username', reserved);

  const rawName = text(form.name);
  const nameProblem = textProblem(rawName);
  if (nameProblem) add('name', TEXT_PROBLEM_MESSAGES[nameProblem]);
  const name = rawName.trim();
  if (name.length > NAME_MAX_LENGTH) add('name', NEW_USER_MESSAGES.nameTooLong);
  if (name.length < 1) add('name', NEW_USER_MESSAGES.nameRequired);

  if (!isRole(form.role)) add('role', NEW_USER_MESSAGES.role);

  // Passwords are kept as typed: no trimming.
  const password = text(form.password);
  const passwordProblem = textProblem(password);
  if (passwordProblem) add('password', TEXT_PROBLEM_MESSAGES[passwordProblem]);
  if (password.length > PASSWORD_MAX_LENGTH || password.length < PASSWORD_MIN_LENGTH)
    add('password', NEW_USER_MESSAGES.password);

  if (Object.keys(errors).length > 0 || !isRole(form.role)) return { ok: false, errors };
  return { ok: true, value: { username, name, role: form.role } };
}
