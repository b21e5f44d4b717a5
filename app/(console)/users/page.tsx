import type { Metadata } from 'next';
import { Prefetched } from '@/components/data/prefetched';
import { UsersView } from '@/components/users/users-view';
import { PageHeader } from '@/components/ui/page-header';
import { readForPage } from '@/lib/reads/define-read';
import { userList } from '@/lib/reads/users';
import { page } from '@/lib/server/page';
import { loadUsersSearch } from '@/lib/url-state/users';

export const metadata: Metadata = { title: 'Users' };

// A non-admin gets a real HTTP 403 from page() (forbidden()), before anything is read.
export default page('manageUsers', {}, async function UsersPage({ actor, query }) {
  const users = await readForPage(userList, actor, loadUsersSearch(query), query);
  // Invalid filters are not prefetched: the view asks the API, which names the field.
  return (
    <>
      <PageHeader title="Users" description="Who may sign in to Keel, and with which role. Every change is audited." />
      <Prefetched queries={users.ok ? [users.prefetch] : []}>
        <UsersView currentUsername={actor.login} />
      </Prefetched>
    </>
  );
});
