import { z } from 'zod';
import { ROLES } from './roles';
import { cursorText, multiLineText, singleLineText } from './text';

/**
 * User management input (DESIGN.md 5.3), one schema per action shared by the form
 * and the server action. Users are named by username: it is unique, never changes,
 * and is what the audit log shows as the target.
 */
export const USERNAME_PATTERN = /^[a-z0-9_.]{2,64}$/;

const username = z
  .string()
  .trim()
  .toLowerCase()
  .regex(USERNAME_PATTERN, 'Usernames are 2 to 64 of a-z, 0-9, "_" and ".".');

/** A fresh id per form: a repeated submit of the same form returns the first result. */
const operationId = z.string().uuid('A form operation id is a UUID.').optional();

export const createUserSchema = z.object({
  username,
  name: singleLineText(200, { min: 1, required: 'Give a name.', tooLong: 'Names are at most 200 characters.' }),
  role: z.enum(ROLES, { message: 'Choose a role.' }),
  password: singleLineText(128, { trim: false, tooLong: 'Passwords are 8 to 128 characters.' }).min(8, 'Passwords are 8 to 128 characters.'),
  operationId,
});

export const disableUserSchema = z.object({
  username,
  reason: multiLineText(500, { tooLong: 'A reason is at most 500 characters.' })
    .transform((v) => (v === '' ? undefined : v))
    .optional(),
});

export const enableUserSchema = z.object({ username });

export const changeUserRoleSchema = z.object({
  username,
  role: z.enum(ROLES, { message: 'Choose a role.' }),
  /** The role the admin saw: if someone changed it since, the change is refused. */
  expectedRole: z.enum(ROLES),
});

export type CreateUserInput = z.output<typeof createUserSchema>;
export type SetUserDisabledInput = { username: string; disabled: boolean; reason?: string };
export type ChangeUserRoleInput = z.output<typeof changeUserRoleSchema>;

export const USER_STATUSES = ['active', 'disabled'] as const;

/** The users list's filters, for the page and GET /api/users. */
export const userListQuerySchema = z.object({
  role: z
    .union([z.literal(''), z.enum(ROLES)])
    .transform((v) => (v === '' ? undefined : v))
    .optional(),
  status: z
    .union([z.literal(''), z.enum(USER_STATUSES)])
    .transform((v) => (v === '' ? undefined : v))
    .optional(),
  cursor: cursorText(400).optional(),
});

export type UserListQuery = z.output<typeof userListQuerySchema>;

/** The users list's query params in a fixed order: its query key and its API URL. */
export function userSearch(state: { role?: string | null; status?: string | null; cursor?: string | null }): Record<string, string> {
  const search: Record<string, string> = {};
  for (const key of ['role', 'status', 'cursor'] as const) {
    const value = state[key]?.trim();
    if (value) search[key] = value;
  }
  return search;
}
