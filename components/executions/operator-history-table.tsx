import type { OperatorRequestEntry } from '@/lib/domain/operator-request';
import { DigestButton } from '../audit/digest-button';
import { StatusBadge } from '../ui/status-badge';
import { Cell, DataTable } from '../ui/table';
import { TimeAgo } from '../ui/time-ago';

const ORIGIN = {
  keel: { label: 'Keel', title: 'Written by Keel (operation id starting with keel-)' },
  runtime: { label: 'Runtime CLI', title: 'Recorded by the runtime’s own operator service, outside Keel' },
} as const;

function StatusChange({ prior, result }: { prior: string | null; result: string | null }) {
  if (prior === null && result === null) return <>—</>;
  if (prior === result) return <>{prior} <span className="text-zinc-600 dark:text-zinc-400">(unchanged)</span></>;
  return (
    <>
      {prior ?? 'new'} → {result ?? '—'}
    </>
  );
}

/** Every operator request the runtime recorded for an execution: who asked, for what, and what came of it. */
export function OperatorHistoryTable({ requests, now }: { requests: OperatorRequestEntry[]; now: Date }) {
  return (
    <DataTable
      caption="Operator requests"
      head={['Requested', 'Action', 'Outcome', 'Actor', 'Origin', 'Class', 'Observed version', 'Status', 'Reason', 'Digest']}
      empty={requests.length === 0}
    >
      {requests.map((r) => (
        <tr key={r.id}>
          <Cell><TimeAgo at={new Date(r.requestedAt)} now={now} /></Cell>
          <Cell mono>{r.action}</Cell>
          <Cell>
            <StatusBadge status={r.outcome} />
            {r.rejectionCode ? <span className="ml-2 font-mono text-xs">{r.rejectionCode}</span> : null}
          </Cell>
          <Cell mono>{r.actorRef}</Cell>
          <Cell>
            <span title={`${ORIGIN[r.origin].title}; operation ${r.operationId}`}>{ORIGIN[r.origin].label}</span>
          </Cell>
          <Cell mono>{r.authorizationClass}</Cell>
          <Cell>{r.observedVersion ?? '—'}</Cell>
          <Cell><StatusChange prior={r.priorStatus} result={r.resultStatus} /></Cell>
          <Cell mono>{r.reasonCode ?? '—'}</Cell>
          <Cell><DigestButton digest={r.requestDigest} /></Cell>
        </tr>
      ))}
    </DataTable>
  );
}
