'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useState } from 'react';
import type { ReceiptHistory } from '@/lib/queries/settlements-types';
import { receiptHistoryQuery } from '@/lib/reads/queries';
import { Button } from '../ui/button';
import { ErrorState } from '../ui/states';
import { StatusBadge } from '../ui/status-badge';
import { Cell, DataTable } from '../ui/table';
import { TimeAgo } from '../ui/time-ago';
import { useTimeZone } from '../ui/time-zone';
import { DeadLetterDialog } from './dead-letter-dialog';
import { deadLetterTarget, type DeadLetterTarget } from './dead-letter-target';
import { DISCARD_ACTION } from '@/lib/domain/settlement-vocabulary';
import { bulkReplayHref, LINK } from './links';
import { RequeueDialog } from './requeue-dialog';
import { FailureDetail } from './failure-detail';
import { RelatedLinks, type RelatedLink } from '../ui/related-links';
import type { DeepLinks } from '@/lib/domain/deep-links';
import { auditTargetFilterHref } from '@/lib/url-state/audit';
import { deadLettersHref, queueHref } from '@/lib/url-state/settlements';
import { requeueTarget, type RequeueTarget } from './requeue-target';

const DASH = <span className="text-zinc-500 dark:text-zinc-400">—</span>;
const STATE_TEXT = {
  due: 'queued, due',
  leased: 'queued, leased by a worker',
  retry_scheduled: 'queued, waiting for a retry',
} as const;

/** Neither queued nor dead-lettered: say which of the two endings its own history records, newest first. */
function ReceiptGone({ history, now }: { history: ReceiptHistory; now: Date }) {
  const finished = history.events.find((e) => e.kind === 'finished');
  const discarded = history.audit.find((a) => a.action === DISCARD_ACTION && a.outcome === 'APPLIED');
  if (discarded && (!finished || Date.parse(discarded.at) >= finished.atMs)) {
    return (
      <>
        Now <strong>gone</strong>: its dead letter was discarded by {discarded.actorLogin}{' '}
        <TimeAgo at={new Date(discarded.at)} now={now} />.
      </>
    );
  }
  if (finished) {
    return (
      <>
        Now <strong>finished</strong>: settled <TimeAgo at={new Date(finished.atMs)} now={now} />.
      </>
    );
  }
  return (
    <>
      Neither queued nor dead-lettered, and Keel holds no finish or discard for this receipt
      {history.truncated ? ' within the history shown' : ''}.
    </>
  );
}

/** A lease that ran out with no outcome: its claim enters the history when a later claim or a requeue ends it. */
function LapsedClaim({ owner, untilMs, now }: { owner: string; untilMs: number; now: Date }) {
  return (
    <>
      , its claim by {owner} lapsed <TimeAgo at={new Date(untilMs)} now={now} /> with no outcome
    </>
  );
}

/** How long a claim was held before its outcome: `340 ms`, `12.5 s`, `3.2 min`. */
function heldFor(ms: number): string {
  if (ms < 1_000) return `${Math.max(0, ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  return `${(ms / 60_000).toFixed(1)} min`;
}

/**
 * An event's claim: an outcome says how long its claim was held (its claim time in the title);
 * a `claimed` event is a claim that ended with no outcome (docs/design.md#settlement-history).
 */
function ClaimCell({ event, tz }: { event: ReceiptHistory['events'][number]; tz: ReturnType<typeof useTimeZone> }) {
  if (event.kind === 'claimed') return <>no outcome</>;
  if (event.claimedAtMs === null) return DASH;
  return (
    <span title={`claimed ${tz.format(new Date(event.claimedAtMs))}`}>
      held {heldFor(event.atMs - event.claimedAtMs)}
    </span>
  );
}

/**
 * The relations a receipt's data has: its list, its audit trail and the bulk jobs that replayed it.
 * The settlement store names no execution or step, so none is linked (docs/console.md#settlements).
 */
function receiptRelations(history: ReceiptHistory): RelatedLink[] {
  const { receiptId, queued, deadLetter } = history;
  const jobs = [...new Set(history.replays.flatMap((r) => (r.bulkJob === null ? [] : [r.bulkJob])))];
  return [
    ...(deadLetter ? [{ href: deadLettersHref({ q: receiptId }), text: 'In the dead letters' }] : []),
    ...(queued ? [{ href: queueHref({ q: receiptId, state: queued.state }), text: 'In the queue' }] : []),
    { href: auditTargetFilterHref('settlement', receiptId), text: 'Audit events for this receipt' },
    ...jobs.map((job) => ({ href: bulkReplayHref(job), text: `Bulk job ${job}` })),
  ];
}

/** Where a receipt is now, and its attempts, reasons, claims, replays and audit trail, newest first. */
export function ReceiptHistoryView({
  receiptId,
  canAct,
  links,
}: {
  receiptId: string;
  canAct: boolean;
  links: DeepLinks;
}) {
  const { data: history, error } = useQuery(receiptHistoryQuery.options({ receiptId }));
  const [deadLetterAction, setDeadLetterAction] = useState<DeadLetterTarget | null>(null);
  const tz = useTimeZone();
  const [requeue, setRequeue] = useState<RequeueTarget | null>(null);
  if (!history) return error ? <ErrorState detail={error.message} /> : null;
  const now = new Date(history.serverNowMs);
  const { queued, deadLetter } = history;

  return (
    <div className="space-y-6">
      <section
        aria-label="Current state"
        className="rounded-lg border border-zinc-200 bg-white p-4 dark:border-zinc-800 dark:bg-zinc-900"
      >
        <div className="flex flex-wrap items-center justify-between gap-3">
          <p className="text-sm" data-testid="receipt-place">
            {queued ? (
              <>
                Now <strong>{STATE_TEXT[queued.state]}</strong>:{' '}
                {queued.workKind === 'retry_scheduled' ? 'retry' : 'pending observation'}, {queued.attempts} attempt
                {queued.attempts === 1 ? '' : 's'}, visible <TimeAgo at={new Date(queued.nextVisibleAtMs)} now={now} />
                {queued.leaseOwner && queued.state === 'leased' ? <>, leased by {queued.leaseOwner}</> : null}
                {queued.leaseOwner && queued.state !== 'leased' && queued.leaseUntilMs !== null ? (
                  <LapsedClaim owner={queued.leaseOwner} untilMs={queued.leaseUntilMs} now={now} />
                ) : null}
                , row version {queued.rowVersion}.
              </>
            ) : deadLetter ? (
              <>
                Now <strong>dead-lettered</strong>: reason{' '}
                <span className="font-mono text-xs">{deadLetter.reason}</span> after {deadLetter.attempts} attempts,
                recorded <TimeAgo at={new Date(deadLetter.recordedAtMs)} now={now} />.
              </>
            ) : (
              <ReceiptGone history={history} now={now} />
            )}
          </p>
          {canAct ? (
            <div className="flex gap-2">
              {deadLetter ? (
                <>
                  <Button variant="primary" onClick={() => setDeadLetterAction(deadLetterTarget('replay', deadLetter))}>
                    Replay…
                  </Button>
                  <Button onClick={() => setDeadLetterAction(deadLetterTarget('discard', deadLetter))}>Discard…</Button>
                </>
              ) : null}
              {queued && queued.state === 'retry_scheduled' && queued.workKind === 'retry_scheduled' ? (
                <Button onClick={() => setRequeue(requeueTarget(queued))}>Requeue now…</Button>
              ) : null}
            </div>
          ) : null}
        </div>
        <FailureDetail history={history} now={now} />
      </section>
      <RelatedLinks label={`Related to receipt ${receiptId}`} links={receiptRelations(history)} external={links} />

      <section aria-labelledby="receipt-replays">
        <h2 id="receipt-replays" className="mb-2 text-sm font-semibold">
          Replays
        </h2>
        <DataTable
          caption="Replays"
          head={[tz.heading('When', now), 'By', 'Prior attempts', 'Prior reason', 'Note', 'Bulk job', 'Operation id']}
          empty={history.replays.length === 0}
        >
          {history.replays.map((r) => (
            <tr key={r.operationId}>
              <Cell>
                <TimeAgo at={new Date(r.at)} now={now} column />
              </Cell>
              <Cell>{r.actorLogin}</Cell>
              <Cell>{r.priorAttempts}</Cell>
              <Cell mono>{r.priorReason}</Cell>
              <td className="max-w-64 truncate px-3 py-2" title={r.note}>
                {r.note}
              </td>
              <Cell>
                {r.bulkJob !== null ? (
                  <Link href={bulkReplayHref(r.bulkJob)} className={LINK}>
                    {r.bulkJob}
                  </Link>
                ) : (
                  DASH
                )}
              </Cell>
              <Cell mono>{r.operationId}</Cell>
            </tr>
          ))}
        </DataTable>
      </section>

      <section aria-labelledby="receipt-events">
        <h2 id="receipt-events" className="mb-2 text-sm font-semibold">
          Attempts, claims and reasons
        </h2>
        <DataTable
          caption="Settlement events"
          head={[tz.heading('When', now), 'Event', 'Attempt', 'Reason code', 'Claim']}
          empty={history.events.length === 0}
        >
          {history.events.map((e) => (
            <tr key={e.id}>
              <Cell>
                <TimeAgo at={new Date(e.atMs)} now={now} column />
              </Cell>
              <Cell mono>{e.kind}</Cell>
              <Cell>{e.attempt}</Cell>
              <Cell mono>{e.reasonCode ?? DASH}</Cell>
              <Cell>
                <ClaimCell event={e} tz={tz} />
              </Cell>
            </tr>
          ))}
        </DataTable>
      </section>

      <section aria-labelledby="receipt-audit">
        <h2 id="receipt-audit" className="mb-2 text-sm font-semibold">
          Audit trail
        </h2>
        <DataTable
          caption="Audit events for this receipt"
          head={[tz.heading('When', now), 'Actor', 'Role', 'Action', 'Reason', 'Outcome']}
          empty={history.audit.length === 0}
        >
          {history.audit.map((a) => (
            <tr key={a.id}>
              <Cell>
                <TimeAgo at={new Date(a.at)} now={now} column />
              </Cell>
              <Cell>{a.actorLogin}</Cell>
              <Cell>{a.actorRole}</Cell>
              <Cell mono>{a.action}</Cell>
              <td className="max-w-64 truncate px-3 py-2" title={a.reason ?? undefined}>
                {a.reason ?? DASH}
              </td>
              <Cell>
                <StatusBadge status={a.outcome} />
                {a.code ? <span className="ml-2 font-mono text-xs">{a.code}</span> : null}
              </Cell>
            </tr>
          ))}
        </DataTable>
      </section>
      {history.truncated ? (
        <p className="text-xs text-zinc-600 dark:text-zinc-400">Each list shows its newest 200 entries.</p>
      ) : null}
      {deadLetterAction ? (
        <DeadLetterDialog target={deadLetterAction} onClose={() => setDeadLetterAction(null)} />
      ) : null}
      {requeue ? <RequeueDialog target={requeue} onClose={() => setRequeue(null)} /> : null}
    </div>
  );
}
