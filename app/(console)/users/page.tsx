import { dehydrate, HydrationBoundary, QueryClient } from '@tanstack/react-query';
import type { Metadata } from 'next';
import { UsersView } from '@/components/users/users-view';
import { PageHeader } from '@/components/ui/page-header';
import { userListQuerySchema, userSearch } from '@/lib/domain/users';
import { listUsers, parseUserCursor } from '@/lib/queries/users';
import { queryKeys } from '@/lib/query-keys';
import { page } from '@/lib/server/page';
import { runtime } from '@/lib/server/runtime';

export const metadata: Metadata = { title: 'Users' };

// A non-admin gets a real HTTP 403 from page() (forbidden()), before anything is read.
export default page('manageUsers', { search: userListQuerySchema }, async function UsersPage({ actor, query, search: parsed }) {
  const search = userSearch(query);
  const queryClient = new QueryClient();
  if (parsed.ok) {
    const { cursor, ...filters } = parsed.value;
    const after = parseUserCursor(cursor);
    if (after !== 'invalid') queryClient.setQueryData([...queryKeys.users.list(), search], await listUsers(runtime().db, filters, after));
  }
  return (
    <>
      <PageHeader title="Users" description="Who may sign in to Keel, and with which role. Every change is audited." />
      <HydrationBoundary state={dehydrate(queryClient)}>
        <UsersView currentUsername={actor.login} />
      </HydrationBoundary>
    </>
  );
});
