'use server';

import { changeUserRoleSchema, createUserSchema, disableUserSchema, enableUserSchema } from '@/lib/domain/users';
import type { DirectoryUser } from '@/lib/ports/user-directory';
import { action } from '@/lib/server/action';
import { userServicePorts as ports } from '@/lib/server/composition-root';
import { changeUserRole, createUser, setUserDisabled } from '@/lib/services/users';

/** What the client learns about a user: no id beyond what the list already shows, never a hash. */
export interface UserSummary {
  username: string;
  name: string;
  role: DirectoryUser['role'];
  disabled: boolean;
}

const summary = (user: DirectoryUser): UserSummary => ({
  username: user.username,
  name: user.name,
  role: user.role,
  disabled: user.disabled,
});

export const createUserAction = action(createUserSchema, 'user.create', async (actor, input, { requestId }) => {
  const result = await createUser(ports(), actor, input, { requestId });
  return result.ok ? { ok: true, value: { user: summary(result.value.user), created: result.value.created } } : result;
});

/** Disables the user and ends their sessions at once. */
export const disableUserAction = action(disableUserSchema, 'user.disable', async (actor, input, { requestId }) => {
  const result = await setUserDisabled(ports(), actor, { ...input, disabled: true }, { requestId });
  if (!result.ok) return result;
  const { user, changed, sessionsEnded } = result.value;
  return { ok: true, value: { user: summary(user), changed, sessionsEnded } };
});

export const enableUserAction = action(enableUserSchema, 'user.enable', async (actor, input, { requestId }) => {
  const result = await setUserDisabled(ports(), actor, { ...input, disabled: false }, { requestId });
  return result.ok ? { ok: true, value: { user: summary(result.value.user), changed: result.value.changed } } : result;
});

export const changeUserRoleAction = action(changeUserRoleSchema, 'user.role', async (actor, input, { requestId }) => {
  const result = await changeUserRole(ports(), actor, input, { requestId });
  return result.ok ? { ok: true, value: { user: summary(result.value.user), changed: result.value.changed } } : result;
});
