import Link from 'next/link';
import { auditChanges } from '@/lib/domain/audit-change';
import type { AuditEventView } from '@/lib/queries/audit-types';
import { StatusBadge } from '../ui/status-badge';
import type { CalmRows } from '../ui/calm-rows';
import { Cell, DataTable } from '../ui/table';
import { TimeAgo } from '../ui/time-ago';
import { useTimeZone } from '../ui/time-zone';
import { DigestButton } from './digest-button';

const HEAD = ['Time', 'Actor', 'Role', 'Action', 'Target', 'Change', 'Reason', 'Outcome', 'Digest'];

/**
 * The page of an audit event's target, for the kinds that have one. A user's page is the
 * admins' user list: other roles see the target without a link that would answer 403.
 */
export function auditTargetHref(kind: string, id: string, canManageUsers: boolean): string | null {
  switch (kind) {
    case 'batch_execution':
      return `/executions/${encodeURIComponent(id)}`;
    case 'settlement':
      return `/settlements/${encodeURIComponent(id)}`;
    case 'recovery_proposal':
      return `/recovery/${encodeURIComponent(id)}`;
    case 'bulk_replay':
      return `/settlements/bulk/${encodeURIComponent(id)}`;
    case 'user':
      return canManageUsers ? `/users#user-${encodeURIComponent(id)}` : null;
    default:
      return null;
  }
}

/** One page of audit events; a click on an actor or target narrows the filters to it. */
export function AuditTable({
  rows,
  serverNow,
  onFilter,
  emptyMessage,
  canManageUsers,
  calm,
}: {
  rows: AuditEventView[];
  calm?: CalmRows;
  /** Whether the viewer may open /users, where a user target's link goes. */
  canManageUsers: boolean;
  serverNow: Date;
  onFilter: (filter: { actor: string } | { targetKind: string; targetId: string }) => void;
  emptyMessage: string;
}) {
  const link = 'text-left underline decoration-dotted hover:text-sky-800 dark:hover:text-sky-300';
  const tz = useTimeZone();
  return (
    <DataTable caption="Audit events" head={[tz.heading('Time', serverNow), ...HEAD.slice(1)]} calm={calm}>
      {rows.length === 0 ? (
        <tr>
          <td colSpan={HEAD.length} className="px-3 py-8 text-center text-zinc-600 dark:text-zinc-400">
            {emptyMessage}
          </td>
        </tr>
      ) : (
        rows.map((e) => (
          <tr key={e.id} data-audit-id={e.id}>
            <Cell>
              <TimeAgo at={new Date(e.at)} now={serverNow} column />
            </Cell>
            <Cell>
              <button
                type="button"
                className={link}
                title={`Only ${e.actorLogin}'s actions`}
                onClick={() => onFilter({ actor: e.actorLogin })}
              >
                {e.actorLogin}
              </button>
            </Cell>
            <Cell>{e.actorRole}</Cell>
            <td className="max-w-48 px-3 py-2 font-mono text-xs [overflow-wrap:anywhere]">{e.action}</td>
            <td className="max-w-56 px-3 py-2" title={`${e.targetKind} ${e.targetId}`}>
              <span className="flex items-baseline gap-1.5">
                <AuditTarget kind={e.targetKind} id={e.targetId} canManageUsers={canManageUsers} />
                <button
                  type="button"
                  className={`${link} shrink-0 text-xs`}
                  aria-label={`Only events on ${e.targetKind} ${e.targetId}`}
                  onClick={() => onFilter({ targetKind: e.targetKind, targetId: e.targetId })}
                >
                  filter
                </button>
              </span>
            </td>
            <td className="max-w-48 px-3 py-2 text-xs [overflow-wrap:anywhere]">
              <AuditChange before={e.before} after={e.after} />
            </td>
            <td className="max-w-40 truncate px-3 py-2" title={e.reason ?? undefined}>
              {e.reason ?? <span className="text-zinc-500 dark:text-zinc-400">—</span>}
            </td>
            <td className="px-3 py-2">
              <StatusBadge status={e.outcome} />
              {e.code ? (
                <span className="mt-0.5 block font-mono text-xs [overflow-wrap:anywhere]">{e.code}</span>
              ) : null}
            </td>
            <Cell>
              {e.digest ? (
                <DigestButton digest={e.digest} />
              ) : (
                <span className="text-zinc-500 dark:text-zinc-400">—</span>
              )}
            </Cell>
          </tr>
        ))
      )}
    </DataTable>
  );
}

function AuditTarget({ kind, id, canManageUsers }: { kind: string; id: string; canManageUsers: boolean }) {
  const href = auditTargetHref(kind, id, canManageUsers);
  const text = (
    <>
      <span className="text-zinc-600 dark:text-zinc-400">{kind}</span> <span className="font-mono text-xs">{id}</span>
    </>
  );
  return href ? (
    <Link href={href} prefetch={false} className="truncate text-sky-800 underline dark:text-sky-300">
      {text}
    </Link>
  ) : (
    <span className="truncate">{text}</span>
  );
}

/** The fields the event changed, each old value beside the new one. */
function AuditChange({ before, after }: { before: unknown; after: unknown }) {
  const changes = auditChanges(before, after);
  if (changes.length === 0) return <span className="text-zinc-500 dark:text-zinc-400">—</span>;
  return (
    <ul className="space-y-0.5">
      {changes.map((c) => (
        <li key={c.field}>
          <span className="font-medium">{c.field}</span>: <span className="font-mono">{c.before}</span> →{' '}
          <span className="font-mono">{c.after}</span>
        </li>
      ))}
    </ul>
  );
}
