import type { AuditEventView } from '@/lib/queries/audit';
import { StatusBadge } from '../ui/status-badge';
import { Cell, DataTable } from '../ui/table';
import { TimeAgo } from '../ui/time-ago';
import { DigestButton } from './digest-button';

const HEAD = ['Time', 'Actor', 'Role', 'Action', 'Target', 'Reason', 'Outcome', 'Digest'];

/** One page of audit events; a click on an actor or target narrows the filters to it. */
export function AuditTable({
  rows,
  serverNow,
  onFilter,
  emptyMessage,
}: {
  rows: AuditEventView[];
  serverNow: Date;
  onFilter: (filter: { actor: string } | { targetKind: string; targetId: string }) => void;
  emptyMessage: string;
}) {
  const link = 'text-left underline decoration-dotted hover:text-sky-800 dark:hover:text-sky-300';
  return (
    <DataTable caption="Audit events" head={HEAD}>
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
              <TimeAgo at={new Date(e.at)} now={serverNow} />
            </Cell>
            <Cell>
              <button type="button" className={link} title={`Only ${e.actorLogin}'s actions`} onClick={() => onFilter({ actor: e.actorLogin })}>
                {e.actorLogin}
              </button>
            </Cell>
            <Cell>{e.actorRole}</Cell>
            <td className="max-w-48 px-3 py-2 font-mono text-xs [overflow-wrap:anywhere]">{e.action}</td>
            <td className="max-w-48 truncate px-3 py-2" title={`${e.targetKind} ${e.targetId}`}>
              <button
                type="button"
                className={link}
                title={`Only events on ${e.targetKind} ${e.targetId}`}
                onClick={() => onFilter({ targetKind: e.targetKind, targetId: e.targetId })}
              >
                <span className="text-zinc-600 dark:text-zinc-400">{e.targetKind}</span> <span className="font-mono text-xs">{e.targetId}</span>
              </button>
            </td>
            <td className="max-w-40 truncate px-3 py-2" title={e.reason ?? undefined}>
              {e.reason ?? <span className="text-zinc-500 dark:text-zinc-400">—</span>}
            </td>
            <td className="px-3 py-2">
              <StatusBadge status={e.outcome} />
              {e.code ? <span className="mt-0.5 block font-mono text-xs [overflow-wrap:anywhere]">{e.code}</span> : null}
            </td>
            <Cell>{e.digest ? <DigestButton digest={e.digest} /> : <span className="text-zinc-500 dark:text-zinc-400">—</span>}</Cell>
          </tr>
        ))
      )}
    </DataTable>
  );
}
