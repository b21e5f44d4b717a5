import 'server-only';
import { decodedCursor } from '../domain/text';
import { userListQuerySchema } from '../domain/users';
import { listUsers, parseUserCursor } from '../queries/users';
import { defineRead } from './define-read';

/** The users an admin manages, filtered by role and status; from the primary, since actions are taken from it. */
export const userList = defineRead({
  path: '/api/users',
  permission: 'manageUsers',
  search: userListQuerySchema.extend({ cursor: decodedCursor(400, parseUserCursor) }),
  source: 'primary',
  read: (db, { cursor, ...filters }) => listUsers(db, filters, cursor),
});
