import { createLoader, parseAsString, parseAsStringLiteral } from 'nuqs/server';
import { ROLES } from '../domain/roles';
import { USER_STATUSES } from '../domain/user-search';

/** The users list's URL state (userListQuerySchema validates the same params). */
export const usersSearch = {
  role: parseAsStringLiteral(ROLES),
  status: parseAsStringLiteral(USER_STATUSES),
  cursor: parseAsString,
};
export const loadUsersSearch = createLoader(usersSearch);
