import { z } from 'zod';
import {
  NAME_MAX_LENGTH,
  NEW_USER_MESSAGES,
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_LENGTH,
  reservedUsernameMessage,
  USERNAME_PATTERN,
} from './new-user-check';
import { ROLES } from './roles';
import { cursorText, multiLineText, singleLineText } from './text';
import { USER_STATUSES } from './user-search';

export { USER_STATUSES } from './user-search';

/**
 * User management input (docs/design.md#users), one schema per server action. The create
 * form checks its fields first with checkNewUser (new-user-check.ts: the same rules
 * and messages without zod, held equal to createUserSchema by a unit test). Users are
 * named by username: it is unique, never changes, and is what the audit log shows as
 * the target.
 */
const username = z.string().trim().toLowerCase().regex(USERNAME_PATTERN, NEW_USER_MESSAGES.username);

/** A fresh id per form: a repeated submit of the same form returns the first result. */
const operationId = z.string().uuid('A form operation id is a UUID.').optional();

export const createUserSchema = z.object({
  // Existing users keep any name (disable, enable, role); a new one may not take a reserved prefix.
  username: username.superRefine((value, context) => {
    const reserved = reservedUsernameMessage(value);
    if (reserved) context.addIssue({ code: 'custom', message: reserved });
  }),
  name: singleLineText(NAME_MAX_LENGTH, {
    min: 1,
    required: NEW_USER_MESSAGES.nameRequired,
    tooLong: NEW_USER_MESSAGES.nameTooLong,
  }),
  role: z.enum(ROLES, { message: NEW_USER_MESSAGES.role }),
  password: singleLineText(PASSWORD_MAX_LENGTH, { trim: false, tooLong: NEW_USER_MESSAGES.password }).min(
    PASSWORD_MIN_LENGTH,
    NEW_USER_MESSAGES.password,
  ),
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
