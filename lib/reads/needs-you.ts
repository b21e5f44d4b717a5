import 'server-only';
import { needsYouPage } from '../server/live-reads';
import { defineRead } from './define-read';

/**
 * What waits on the reader's role (docs/console.md#needs-you). The snapshot behind it is read
 * once per change for the whole process and shared by every reader (lib/server/live-reads.ts),
 * so a request reads the database only when no change has been read yet.
 */
export const needsYou = defineRead({
  path: '/api/needs-you',
  permission: 'read',
  source: 'list',
  read: (_db, _search, { actor }) => needsYouPage(actor),
});
