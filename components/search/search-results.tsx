'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useQueryStates } from 'nuqs';
import { ApiError } from '@/lib/http/read-json';
import { SEARCH_HITS_PER_KIND, SEARCH_KIND_LABELS, searchHitHref, type SearchHit } from '@/lib/queries/search-types';
import { searchResultsQuery } from '@/lib/reads/queries';
import { searchUrlState } from '@/lib/url-state/search';
import { ErrorState } from '../ui/states';

const PLACES = {
  queued: 'in the settlement queue',
  dead_lettered: 'dead-lettered',
  history: 'no longer queued; its history remains',
} as const;

/** A hit as a line: what it is, and what tells it apart from its neighbours. */
function describe(hit: SearchHit): { title: string; detail: string } {
  switch (hit.kind) {
    case 'execution':
      return {
        title: `Execution ${hit.executionId}`,
        detail: `${hit.jobName} · ${hit.status} · attempt ${hit.attempt} of instance ${hit.instanceId}`,
      };
    case 'instance':
      return {
        title: `Instance ${hit.instanceId}, execution ${hit.executionId}`,
        detail: `${hit.jobName} · ${hit.status} · attempt ${hit.attempt}`,
      };
    case 'receipt':
      return { title: `Receipt ${hit.receiptId}`, detail: PLACES[hit.place] };
    case 'retryKey':
      return {
        title: `Step ${hit.stepLogicalId} of execution ${hit.executionId}`,
        detail:
          `${hit.jobName} · retry key${hit.keyPrefixes.length === 1 ? '' : 's'} ` +
          `${hit.keyPrefixes.map((k) => `${k}…`).join(', ')}`,
      };
    case 'proposal':
      return {
        title: `Recovery proposal ${hit.proposalId}`,
        detail:
          `${hit.proposalKind} of ${hit.targetKind} ${hit.targetId} · ` +
          `${hit.status}${hit.match === 'digest' ? ` · evidence digest ${hit.digestHex.slice(0, 16)}…` : ''}`,
      };
    case 'operation':
      if (hit.source === 'runtime') {
        const target =
          hit.executionId !== null
            ? `execution ${hit.executionId}`
            : hit.instanceId !== null
              ? `instance ${hit.instanceId}`
              : 'no target';
        return { title: `Runtime request ${hit.action} ${hit.operationId}`, detail: `${hit.outcome} · ${target}` };
      }
      if (hit.source === 'replay')
        return { title: `Replay ${hit.operationId}`, detail: `receipt ${hit.receiptId} · by ${hit.actorLogin}` };
      return {
        title: `Audit event ${hit.action} ${hit.operationId}`,
        detail: `${hit.outcome} · ${hit.targetKind} ${hit.targetId} · by ${hit.actorLogin}`,
      };
    case 'user':
      return { title: `User ${hit.username}`, detail: `${hit.role}${hit.disabled ? ' · disabled' : ''}` };
  }
}

/** The matches of one search text, by kind; the page prefetches the same key. */
export function SearchResultsView() {
  const [{ q }] = useQueryStates(searchUrlState);
  const text = q?.trim() ?? '';
  const { data, error } = useQuery({ ...searchResultsQuery.options({ q: text }), enabled: text !== '' });

  if (!text)
    return (
      <p className="text-sm">
        Type an id into the search box at the top of the page (or press <kbd className="font-mono">/</kbd>) and press
        Enter.
      </p>
    );
  if (error) {
    const problem =
      error instanceof ApiError && error.fieldErrors?.q
        ? `${error.code}: ${error.fieldErrors.q.join(' ')}`
        : (error as Error).message;
    return <ErrorState title="Could not search" detail={problem} />;
  }
  if (!data)
    return (
      <p className="text-sm" aria-live="polite">
        Searching…
      </p>
    );
  return (
    <div className="space-y-6">
      <p className="text-sm text-zinc-600 dark:text-zinc-400" aria-live="polite" data-testid="search-summary">
        {data.groups.length === 0 ? `Nothing has the id “${data.q}”.` : `Matches for “${data.q}”, by kind.`}
      </p>
      {data.notes.map((note) => (
        <p
          key={note}
          role="note"
          className={
            'rounded-md border-l-4 border-amber-500 bg-amber-50 p-2 text-sm text-amber-950 dark:bg-amber-950 ' +
            'dark:text-amber-50'
          }
        >
          {note}
        </p>
      ))}
      {data.groups.map((group) => (
        <section key={group.kind} aria-labelledby={`search-${group.kind}`}>
          <h2 id={`search-${group.kind}`} className="text-lg font-semibold">
            {SEARCH_KIND_LABELS[group.kind]}
          </h2>
          <ul
            className={
              'mt-2 divide-y divide-zinc-200 rounded-lg border border-zinc-200 bg-white dark:divide-zinc-800 ' +
              'dark:border-zinc-800 dark:bg-zinc-900'
            }
          >
            {group.hits.map((hit) => {
              const { title, detail } = describe(hit);
              return (
                <li key={`${title} ${detail}`} className="px-3 py-2">
                  <Link
                    href={searchHitHref(hit)}
                    className="font-medium text-sky-800 underline [overflow-wrap:anywhere] dark:text-sky-300"
                  >
                    {title}
                  </Link>
                  <div className="text-sm text-zinc-600 [overflow-wrap:anywhere] dark:text-zinc-400">{detail}</div>
                </li>
              );
            })}
          </ul>
          {group.more ? (
            <p className="mt-1 text-sm">
              The first {SEARCH_HITS_PER_KIND} are shown; type more of the id to narrow them.
            </p>
          ) : null}
        </section>
      ))}
    </div>
  );
}
