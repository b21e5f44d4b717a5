import type { OperatorRequestEntry } from '@/lib/domain/operator-request';
import { DigestButton } from '../audit/digest-button';
import { StatusBadge } from '../ui/status-badge';
import { Cell, DataTable } from '../ui/table';
import { formatRelative } from '../ui/time-ago';
import { useTimeZone } from '../ui/time-zone';

const ORIGIN = {
  keel: { label: 'Keel', title: 'Written by Keel (operation id starting with keel-)' },
  runtime: { label: 'Runtime CLI', title: 'Recorded by the runtime’s own operator service, outside Keel' },
} as const;

const sub = 'mt-0.5 block text-xs text-zinc-600 dark:text-zinc-400';

function StatusChange({ prior, result }: { prior: string | null; result: string | null }) {
  if (prior === null && result === null) return <>—</>;
  if (prior === result)
    return (
      <>
        {prior} <span className="text-zinc-600 dark:text-zinc-400">(unchanged)</span>
      </>
    );
  return (
    <>
      {prior ?? 'new'} → {result ?? '—'}
    </>
  );
}

/** Every operator request the runtime recorded for an execution: who asked, for what, and what came of it. */
export function OperatorHistoryTable({ requests, now }: { requests: OperatorRequestEntry[]; now: Date }) {
  const tz = useTimeZone();
  return (
    <DataTable
      caption="Operator requests"
      head={[
        tz.heading('Requested', now),
        'Action / class',
        'Outcome',
        'Actor',
        'Origin',
        'Observed version',
        'Status',
        'Reason',
        'Digest',
      ]}
      empty={requests.length === 0}
    >
      {requests.map((r) => {
        const at = new Date(r.requestedAt);
        return (
          <tr key={r.id}>
            <Cell>
              <time dateTime={r.requestedAt} title={tz.format(at)}>
                {formatRelative(at, now)}
                <span className={sub}>{tz.inColumn(at, now)}</span>
              </time>
            </Cell>
            <Cell>
              <span className="font-mono text-xs">{r.action}</span>
              <span className={sub}>{r.authorizationClass}</span>
            </Cell>
            <Cell>
              <StatusBadge status={r.outcome} />
              {r.rejectionCode ? <span className={`${sub} font-mono`}>{r.rejectionCode}</span> : null}
            </Cell>
            <Cell mono>{r.actorRef}</Cell>
            <Cell>
              <span title={`${ORIGIN[r.origin].title}; operation ${r.operationId}`}>{ORIGIN[r.origin].label}</span>
            </Cell>
            <Cell>{r.observedVersion ?? '—'}</Cell>
            <Cell>
              <StatusChange prior={r.priorStatus} result={r.resultStatus} />
            </Cell>
            <Cell mono>{r.reasonCode ?? '—'}</Cell>
            <Cell>
              <DigestButton digest={r.requestDigest} />
            </Cell>
          </tr>
        );
      })}
    </DataTable>
  );
}
