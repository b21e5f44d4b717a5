'use server';

import { mapOk } from '@/lib/domain/result';
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

export const createUserAction = action(createUserSchema, 'user.create', async (actor, input) =>
  mapOk(await createUser(ports(), actor, input), ({ user, created }) => ({ user: summary(user), created })),
);

/** Disables the user and ends their sessions at once. */
export const disableUserAction = action(disableUserSchema, 'user.disable', async (actor, input) =>
  mapOk(await setUserDisabled(ports(), actor, { ...input, disabled: true }), ({ user, changed, sessionsEnded }) => ({
    user: summary(user),
    changed,
    sessionsEnded,
  })),
);

export const enableUserAction = action(enableUserSchema, 'user.enable', async (actor, input) =>
  mapOk(await setUserDisabled(ports(), actor, { ...input, disabled: false }), ({ user, changed }) => ({
    user: summary(user),
    changed,
  })),
);

export const changeUserRoleAction = action(changeUserRoleSchema, 'user.role', async (actor, input) =>
  mapOk(await changeUserRole(ports(), actor, input), ({ user, changed }) => ({ user: summary(user), changed })),
);
