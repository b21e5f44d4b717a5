'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import {
  formatChange,
  type NeedsYouItem,
  type NeedsYouSection,
  type NeedsYouSeverity,
  type NeedsYouView,
  PROPOSAL_DEADLINE_CRITICAL_MS,
} from '@/lib/domain/needs-you';
import { needsYouQuery } from '@/lib/reads/queries';
import { SEVERITY_BADGE } from '../ui/severity';
import { ErrorState } from '../ui/states';
import { useTimeZone } from '../ui/time-zone';
import { useServerClock } from '../ui/use-server-clock';

const LINK = 'text-sky-800 underline dark:text-sky-300';

const SEVERITY_EDGE: Record<NeedsYouSeverity, string> = {
  critical: 'border-red-600 dark:border-red-400',
  warning: 'border-amber-500 dark:border-amber-300',
};
const SEVERITY_WORD: Record<NeedsYouSeverity, string> = { critical: 'Alert', warning: 'Look' };

/**
 * What waits on the reader's role (docs/console.md#needs-you), first on the overview. The
 * server pushes it through the event stream whenever it changes, so a proposal made by
 * another user shows here within a second or two, without a read per tab.
 */
export function NeedsYouPanel() {
  const { data: view, error } = useQuery(needsYouQuery.options());
  if (!view) return error ? <ErrorState detail={error.message} /> : null;
  return (
    <section aria-labelledby="needs-you-heading" className="mb-8" data-testid="needs-you">
      <div className="mb-2 flex flex-wrap items-baseline justify-between gap-x-4">
        <h2 id="needs-you-heading" className="text-base font-semibold">
          Needs you
        </h2>
        <p className="text-xs text-zinc-600 dark:text-zinc-400">
          Red: the alert's condition holds now. Amber: look soon. Changes are against an hour ago.
        </p>
      </div>
      {view.sections.length === 0 ? (
        <p className="rounded-lg border border-zinc-200 bg-white p-4 text-sm dark:border-zinc-800 dark:bg-zinc-900">
          <span className="font-medium text-emerald-800 dark:text-emerald-300">Nothing waits on a viewer.</span> Viewers
          take no actions; approvers see proposals to decide here, operators stale executions, corrupt envelopes and
          lapsed leases, support rising dead letters.
        </p>
      ) : (
        <div className={`grid gap-4 ${view.sections.length > 1 ? 'lg:grid-cols-3' : ''}`}>
          {view.sections.map((section) => (
            <SectionCard key={section.id} section={section} view={view} />
          ))}
        </div>
      )}
    </section>
  );
}

function SectionCard({ section, view }: { section: NeedsYouSection; view: NeedsYouView }) {
  const id = `needs-you-${section.id}`;
  return (
    <section
      aria-labelledby={id}
      className="rounded-lg border border-zinc-200 bg-white p-4 dark:border-zinc-800 dark:bg-zinc-900"
    >
      <h3 id={id} className="mb-3 text-sm font-semibold">
        {section.title}
      </h3>
      {section.items.length === 0 ? (
        <p className="text-sm" data-testid={`${id}-all-clear`}>
          <span className="font-medium text-emerald-800 dark:text-emerald-300">All clear.</span> {section.allClear}
        </p>
      ) : (
        <ul className="space-y-4">
          {section.items.map((item) => (
            <Item key={item.key} item={item} view={view} />
          ))}
        </ul>
      )}
    </section>
  );
}

function Item({ item, view }: { item: NeedsYouItem; view: NeedsYouView }) {
  const now = useServerClock(view.serverNow);
  // A proposal turns red as its deadline nears, between two pushes: the clock here decides.
  const severity: NeedsYouSeverity = item.proposals
    ? item.proposals.some((p) => new Date(p.deadline).getTime() - now <= PROPOSAL_DEADLINE_CRITICAL_MS)
      ? 'critical'
      : 'warning'
    : item.severity;
  return (
    <li className={`border-l-4 pl-3 ${SEVERITY_EDGE[severity]}`} data-testid={`needs-you-item-${item.key}`}>
      <div className="flex flex-wrap items-baseline gap-x-2 gap-y-1">
        <span className={`rounded px-1.5 py-0.5 text-xs font-semibold ${SEVERITY_BADGE[severity]}`}>
          {SEVERITY_WORD[severity]}
        </span>
        <span className="font-medium">{item.title}</span>
        <span className="text-xl font-semibold tabular-nums" data-testid="needs-you-figure">
          {item.figure.toLocaleString('en-US')}
        </span>
        <span className="text-xs text-zinc-700 dark:text-zinc-300">{formatChange(item.change)}</span>
      </div>
      <p className="mt-1 text-sm text-zinc-700 dark:text-zinc-300">{item.detail}.</p>
      {item.proposals ? <Proposals proposals={item.proposals} now={now} /> : null}
      <p className="mt-1 text-sm">
        <Link href={item.href} className={LINK}>
          Open the list<span className="sr-only">: {item.title}</span>
        </Link>
        <span aria-hidden> · </span>
        {view.docsUrl ? (
          <a href={`${view.docsUrl}/${item.runbook.path}`} className={LINK}>
            Runbook<span className="sr-only">: {item.runbook.alert}</span>
          </a>
        ) : (
          <span className="text-zinc-700 dark:text-zinc-300">
            Runbook: <code className="text-xs">{item.runbook.path}</code>
          </span>
        )}
      </p>
    </li>
  );
}

function Proposals({ proposals, now }: { proposals: NonNullable<NeedsYouItem['proposals']>; now: number }) {
  const zone = useTimeZone();
  return (
    <ul className="mt-2 space-y-1 text-sm">
      {proposals.map((p) => {
        const left = new Date(p.deadline).getTime() - now;
        const near = left <= PROPOSAL_DEADLINE_CRITICAL_MS;
        return (
          <li key={p.id} data-testid="needs-you-proposal" data-proposal-id={p.id}>
            <Link href={p.href} className={LINK}>
              Proposal {p.id}
            </Link>
            : {p.kind === 'ABANDON' ? 'abandon' : 'takeover'} of{' '}
            {p.targetKind === 'batch' ? 'execution' : 'orchestration'}{' '}
            <span className="font-mono text-xs [overflow-wrap:anywhere]">{p.targetId}</span>, by {p.proposerLogin};{' '}
            {/* Server and browser clocks tick apart: the first render's seconds may differ. */}
            <span className={near ? 'font-medium text-red-800 dark:text-red-300' : ''} suppressHydrationWarning>
              {countdown(left)}
            </span>{' '}
            <span className="text-zinc-600 dark:text-zinc-400">(deadline {zone.format(new Date(p.deadline))})</span>
          </li>
        );
      })}
    </ul>
  );
}

const countdown = (left: number) =>
  left <= 0
    ? 'deadline passed'
    : `${Math.floor(left / 60_000)} min ${String(Math.floor((left % 60_000) / 1000)).padStart(2, '0')} s left`;
