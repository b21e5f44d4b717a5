import 'server-only';
import { decodedCursor } from '../domain/text';
import { listRetryKeys } from '../queries/retry-keys';
import { type RetryKeyListView, retryKeyFiltersSchema } from '../queries/retry-keys-types';
import { openRetryKeyCursor, sealRetryKeyCursor } from '../server/retry-key-cursor';
import { defineRead } from './define-read';

/** A cursor this server sealed (lib/server/retry-key-cursor.ts); any other is refused on its field. */
const retryKeyCursor = decodedCursor(200, (token) => {
  const opened = openRetryKeyCursor(token);
  return opened.ok && opened.value ? opened.value : 'invalid';
});

/**
 * Unresolved retry keys across steps (`only=keys`) or corrupt envelopes (`only=corrupt`), newest
 * step first; the page shows the two lists as tabs. Cursors are sealed, so a key never reaches a URL.
 */
export const retryKeyList = defineRead({
  path: '/api/retry-keys',
  permission: 'read',
  search: retryKeyFiltersSchema.extend({ cursor: retryKeyCursor }),
  source: 'list',
  read: async (db, { cursor, ...query }): Promise<RetryKeyListView> => {
    const page = await listRetryKeys(db, { ...query, after: cursor });
    return { rows: page.rows, nextCursor: page.nextCursor ? sealRetryKeyCursor(page.nextCursor) : null };
  },
});
