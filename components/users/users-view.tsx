'use client';

import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useQueryStates } from 'nuqs';
import { useState } from 'react';
import { isRole, ROLES } from '@/lib/domain/roles';
import { formatCappedCount } from '@/lib/domain/capped-count';
import { ApiError } from '@/lib/http/read-json';
import { USER_STATUSES } from '@/lib/domain/user-search';
import { userListQuery } from '@/lib/reads/queries';
import { usersSearch } from '@/lib/url-state/users';
import { Button } from '../ui/button';
import { LoadFailed } from '../ui/states';
import { useCalmRows } from '../ui/calm-rows';
import { Cell, DataTable } from '../ui/table';
import { TimeAgo } from '../ui/time-ago';
import { useTimeZone } from '../ui/time-zone';
import { CreateUserForm } from './create-user-form';
import { newOperationId } from './operation-id';
import { UserChangeDialog, type UserChange } from './user-change-dialog';

const SELECT = 'rounded-md border border-zinc-300 bg-white px-2 py-1 text-sm dark:border-zinc-700 dark:bg-zinc-950';

export function UsersView({ currentUsername }: { currentUsername: string }) {
  const tz = useTimeZone();
  const [state, setState] = useQueryStates(usersSearch, { history: 'push' });
  const query = useQuery({ ...userListQuery.options(state), placeholderData: keepPreviousData });
  const [change, setChange] = useState<UserChange | null>(null);
  const [operationId, setOperationId] = useState(newOperationId);
  const [createErrors, setCreateErrors] = useState<Record<string, string[]>>();
  // Rows being read stay put; newer ones wait behind "Updates waiting".
  const [page, calm] = useCalmRows(
    query,
    state,
    (p) => p.rows,
    (user) => user.username,
  );
  const failure = query.error instanceof ApiError ? query.error : null;

  return (
    <>
      <CreateUserForm
        operationId={operationId}
        serverErrors={createErrors}
        onReview={(draft) => setChange({ kind: 'create', draft })}
      />
      <div className="mb-3 flex flex-wrap items-end justify-between gap-3">
        <form aria-label="User filters" className="flex gap-3" onSubmit={(e) => e.preventDefault()}>
          <label className="text-xs font-medium text-zinc-700 dark:text-zinc-300">
            Role
            <select
              className={`${SELECT} ml-2`}
              value={state.role ?? ''}
              onChange={(e) => setState({ role: ROLES.find((r) => r === e.target.value) ?? null, cursor: null })}
            >
              <option value="">Any</option>
              {ROLES.map((r) => (
                <option key={r}>{r}</option>
              ))}
            </select>
          </label>
          <label className="text-xs font-medium text-zinc-700 dark:text-zinc-300">
            Status
            <select
              className={`${SELECT} ml-2`}
              value={state.status ?? ''}
              onChange={(e) =>
                setState({ status: USER_STATUSES.find((s) => s === e.target.value) ?? null, cursor: null })
              }
            >
              <option value="">Any</option>
              <option value="active">active</option>
              <option value="disabled">disabled</option>
            </select>
          </label>
        </form>
        <p className="text-sm" data-testid="user-count">
          {page ? `${formatCappedCount(page.count)} users` : '\u00a0'}
        </p>
      </div>
      {query.isError && !page ? (
        <LoadFailed what="users" code={failure?.code} message={query.error.message} onRetry={() => query.refetch()} />
      ) : !page ? (
        <p role="status" className="p-8 text-center text-sm text-zinc-600 dark:text-zinc-400">
          Loading users…
        </p>
      ) : (
        <>
          <DataTable
            caption="Users"
            calm={calm}
            head={['Username', 'Name', 'Role', 'Status', tz.heading('Created', new Date(page.serverNow)), 'Actions']}
          >
            {page.rows.length === 0 ? (
              <tr>
                <td colSpan={6} className="px-3 py-8 text-center text-zinc-600 dark:text-zinc-400">
                  No users match these filters.
                </td>
              </tr>
            ) : (
              page.rows.map((user) => {
                const self = user.username === currentUsername;
                return (
                  <tr key={user.id} id={`user-${user.username}`} data-username={user.username}>
                    <Cell mono>
                      {user.username}
                      {self ? (
                        <span className="ml-2 font-sans text-xs text-zinc-600 dark:text-zinc-400">(you)</span>
                      ) : null}
                    </Cell>
                    <Cell>{user.name}</Cell>
                    <Cell>
                      <select
                        aria-label={`Role of ${user.username}`}
                        className={SELECT}
                        value={user.role}
                        disabled={self}
                        title={self ? 'You cannot change your own role; ask another admin.' : undefined}
                        onChange={(e) =>
                          isRole(e.target.value) && setChange({ kind: 'role', user, role: e.target.value })
                        }
                      >
                        {!user.knownRole ? <option value={user.role}>{user.role} (unknown)</option> : null}
                        {ROLES.map((r) => (
                          <option key={r}>{r}</option>
                        ))}
                      </select>
                    </Cell>
                    <Cell>
                      {user.disabled ? (
                        <span
                          className={
                            'rounded bg-red-100 px-1.5 py-0.5 text-xs font-medium text-red-900 dark:bg-red-950 ' +
                            'dark:text-red-200'
                          }
                          title={user.disabledReason ?? undefined}
                        >
                          disabled
                        </span>
                      ) : (
                        <span
                          className={
                            'rounded bg-emerald-100 px-1.5 py-0.5 text-xs font-medium text-emerald-900 ' +
                            'dark:bg-emerald-950 dark:text-emerald-200'
                          }
                        >
                          active
                        </span>
                      )}
                    </Cell>
                    <Cell>
                      <TimeAgo at={new Date(user.createdAt)} now={new Date(page.serverNow)} column />
                    </Cell>
                    <Cell>
                      {self ? (
                        <span className="text-xs text-zinc-600 dark:text-zinc-400">You cannot disable yourself</span>
                      ) : user.disabled ? (
                        <Button onClick={() => setChange({ kind: 'enable', user })}>Enable {user.username}</Button>
                      ) : (
                        <Button onClick={() => setChange({ kind: 'disable', user })}>
                          <span className="text-red-800 dark:text-red-300">Disable {user.username}</span>
                        </Button>
                      )}
                    </Cell>
                  </tr>
                );
              })
            )}
          </DataTable>
          <nav aria-label="User pages" className="mt-3 flex gap-2">
            <Button className="disabled:opacity-50" disabled={!state.cursor} onClick={() => setState({ cursor: null })}>
              First page
            </Button>
            <Button
              className="disabled:opacity-50"
              disabled={!page.nextCursor}
              onClick={() => setState({ cursor: page.nextCursor })}
            >
              Next page →
            </Button>
          </nav>
        </>
      )}
      <UserChangeDialog
        change={change}
        onClose={() => setChange(null)}
        onFieldErrors={setCreateErrors}
        onApplied={(applied) => {
          if (applied.kind === 'create') {
            setOperationId(newOperationId());
            setCreateErrors(undefined);
          }
        }}
      />
    </>
  );
}
