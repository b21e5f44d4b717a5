import { ForbiddenNotice } from '@/components/users/forbidden-notice';
import { currentActor } from '@/lib/server/session';

/** What forbidden() renders, with HTTP 403: today only the admin pages refuse a signed-in role. */
export default async function Forbidden() {
  const actor = await currentActor();
  return <ForbiddenNotice role={actor?.role ?? 'unknown'} what="This page is for admins only." />;
}
