'use client';

import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useQueryStates } from 'nuqs';
import { auditSearch, type AuditSearch } from '@/lib/domain/audit-search';
import { auditSearchOf, auditStateOf, auditUrlSearch } from '@/lib/url-state/audit';
import { formatCappedCount } from '@/lib/domain/capped-count';
import { ApiError } from '@/lib/http/read-json';
import { auditListQuery } from '@/lib/reads/queries';
import { withSearch } from '@/lib/url-state/search-string';
import { Button } from '../ui/button';
import { LoadFailed } from '../ui/states';
import { AuditFilterForm } from './audit-filter-form';
import { useCalmRows } from '../ui/calm-rows';
import { AuditTable } from './audit-table';

/**
 * The audit log with its filters in the URL. The server prefetched the first view;
 * live events of the audit topic refresh it through the read API.
 */
export function AuditView({ canManageUsers }: { canManageUsers: boolean }) {
  const [state, setState] = useQueryStates(auditUrlSearch, { history: 'push' });
  const search = auditSearchOf(state);
  const filters = auditSearchOf(state, false);
  const query = useQuery({ ...auditListQuery.options(search), placeholderData: keepPreviousData });

  const apply = (next: AuditSearch) => setState({ ...auditStateOf(auditSearch(next, false)), cursor: null });
  // Rows being read stay put; newer ones wait behind "Updates waiting".
  const [page, calm] = useCalmRows(
    query,
    search,
    (p) => p.rows,
    (event) => event.id,
  );
  const failure = query.error instanceof ApiError ? query.error : null;
  const filtered = Object.keys(filters).length > 0;
  const exportHref = withSearch('/api/audit/export', filters);

  return (
    <section aria-label="Audit log">
      <AuditFilterForm
        filters={filters}
        fieldErrors={failure?.fieldErrors}
        canManageUsers={canManageUsers}
        onApply={apply}
      />
      {canManageUsers ? null : (
        <p className="mb-3 text-xs text-zinc-600 dark:text-zinc-400">
          Events about users and sign-in are shown to admins only.
        </p>
      )}
      <div className="mb-3 flex flex-wrap items-center justify-between gap-3 text-sm">
        <p data-testid="audit-count" aria-live="polite">
          {page
            ? `${formatCappedCount(page.count)} ` +
              `${page.count.value === 1 && !page.count.capped ? 'event' : 'events'}${filtered ? ' match' : ''}`
            : '\u00a0'}
          {query.isFetching && page ? <span className="ml-2 text-zinc-600 dark:text-zinc-400">Refreshing…</span> : null}
        </p>
        <a
          href={exportHref}
          download
          className={
            'inline-flex items-center rounded-md border border-zinc-300 bg-white px-3 py-1.5 text-sm font-medium ' +
            'hover:bg-zinc-100 dark:border-zinc-700 dark:bg-zinc-900 dark:hover:bg-zinc-800'
          }
        >
          Export CSV{filtered ? ' (filtered)' : ''}
        </a>
      </div>
      {query.isError && !page ? (
        <LoadFailed
          what="the audit log"
          code={failure?.code}
          message={query.error.message}
          onRetry={() => query.refetch()}
        />
      ) : !page ? (
        <p
          role="status"
          className={
            'rounded-lg border border-zinc-200 bg-white p-8 text-center text-sm text-zinc-600 dark:border-zinc-800 ' +
            'dark:bg-zinc-900 dark:text-zinc-400'
          }
        >
          Loading audit events…
        </p>
      ) : (
        <>
          {query.isError ? (
            <p role="alert" className="mb-2 text-sm text-red-700 dark:text-red-400">
              Refresh failed{failure ? ` (${failure.code})` : ''}: {query.error.message} Showing the last rows loaded.
            </p>
          ) : null}
          <AuditTable
            calm={calm}
            rows={page.rows}
            serverNow={new Date(page.serverNow)}
            canManageUsers={canManageUsers}
            onFilter={(f) => apply({ ...filters, ...f })}
            emptyMessage={
              filtered ? 'No audit events match these filters.' : 'No actions have been taken through Keel yet.'
            }
          />
          <nav aria-label="Audit pages" className="mt-3 flex gap-2">
            <Button
              className="disabled:opacity-50"
              disabled={!page.prevCursor}
              onClick={() => setState({ cursor: null })}
            >
              Newest
            </Button>
            <Button
              className="disabled:opacity-50"
              disabled={!page.prevCursor}
              onClick={() => setState({ cursor: page.prevCursor })}
            >
              ← Newer
            </Button>
            <Button
              className="disabled:opacity-50"
              disabled={!page.nextCursor}
              onClick={() => setState({ cursor: page.nextCursor })}
            >
              Older →
            </Button>
          </nav>
        </>
      )}
    </section>
  );
}
