import 'server-only';
import { z } from 'zod';
import { FAILURE_CATEGORIES, FAULT_PHASES } from '../domain/batch-status';
import { decodedCursor, singleLineText } from '../domain/text';
import { listRetryKeys } from '../queries/retry-keys';
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
  search: z.object({
    job: singleLineText(128, { min: 1 }).optional(),
    phase: z.enum(FAULT_PHASES).optional(),
    category: z.enum(FAILURE_CATEGORIES).optional(),
    executionId: z.coerce.number().int().positive().optional(),
    only: z.enum(['keys', 'corrupt']).optional(),
    cursor: retryKeyCursor,
    limit: z.coerce.number().int().min(1).max(500).optional(),
  }),
  source: 'list',
  read: async (db, { cursor, ...query }) => {
    const page = await listRetryKeys(db, { ...query, after: cursor });
    return { rows: page.rows, nextCursor: page.nextCursor ? sealRetryKeyCursor(page.nextCursor) : null };
  },
});
