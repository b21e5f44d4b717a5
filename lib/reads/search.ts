import 'server-only';
import { searchPlan, searchQuerySchema } from '../domain/search';
import { searchEverything } from '../queries/search';
import { defineRead } from './define-read';

/** Every kind of id the text may be, grouped by kind; users only for a role that may open them. */
export const searchResults = defineRead({
  path: '/api/search',
  permission: 'read',
  search: searchQuerySchema,
  source: 'list',
  read: (db, { q }, { actor }) => searchEverything(db, q, searchPlan(q, actor.role)),
});
