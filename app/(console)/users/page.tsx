import type { Metadata } from 'next';
import { Prefetched } from '@/components/data/prefetched';
import { UsersView } from '@/components/users/users-view';
import { PageHeader } from '@/components/ui/page-header';
import { userListQuerySchema, userSearch } from '@/lib/domain/users';
import { listUsers, parseUserCursor } from '@/lib/queries/users';
import { queryKeys } from '@/lib/query-keys';
import { page } from '@/lib/server/page';
import { primaryDb } from '@/lib/server/console-reads';
import { loadUsersSearch } from '@/lib/url-state/users';

export const metadata: Metadata = { title: 'Users' };

// A non-admin gets a real HTTP 403 from page() (forbidden()), before anything is read.
export default page(
  'manageUsers',
  { search: userListQuerySchema },
  async function UsersPage({ actor, query, search: parsed }) {
    const search = userSearch(loadUsersSearch(query));
    const { cursor, ...filters } = parsed.ok ? parsed.value : {};
    const after = parsed.ok ? parseUserCursor(cursor) : 'invalid';
    // Invalid filters are not prefetched: the client asks the API, which names the field.
    const queries =
      after === 'invalid'
        ? []
        : [{ queryKey: queryKeys.users.list(search), queryFn: () => listUsers(primaryDb(), filters, after) }];
    return (
      <>
        <PageHeader
          title="Users"
          description="Who may sign in to Keel, and with which role. Every change is audited."
        />
        <Prefetched queries={queries}>
          <UsersView currentUsername={actor.login} />
        </Prefetched>
      </>
    );
  },
);
