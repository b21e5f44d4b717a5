import { dehydrate, HydrationBoundary, QueryClient } from '@tanstack/react-query';
import type { Metadata } from 'next';
import { ForbiddenNotice } from '@/components/users/forbidden-notice';
import { UsersView } from '@/components/users/users-view';
import { PageHeader } from '@/components/ui/page-header';
import { can } from '@/lib/auth/roles';
import { userListQuerySchema, userSearch } from '@/lib/domain/users';
import { listUsers, parseUserCursor } from '@/lib/queries/users';
import { queryKeys } from '@/lib/query-keys';
import { requireActor } from '@/lib/server/session';
import { runtime } from '@/lib/server/runtime';

export const metadata: Metadata = { title: 'Users' };

type SearchParams = Promise<Record<string, string | string[] | undefined>>;

export default async function UsersPage({ searchParams }: { searchParams: SearchParams }) {
  const actor = await requireActor();
  if (!can(actor.role, 'manageUsers')) {
    return <ForbiddenNotice role={actor.role} what="Only admins may see and manage users." />;
  }
  const raw = Object.fromEntries(Object.entries(await searchParams).map(([k, v]) => [k, Array.isArray(v) ? v[0] : v]));
  const search = userSearch(raw);
  const queryClient = new QueryClient();
  const parsed = userListQuerySchema.safeParse(search);
  if (parsed.success) {
    const { cursor, ...filters } = parsed.data;
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
}
