'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import type { ReactNode } from 'react';
import { ApiError, readJson } from '@/lib/http/read-json';
import type { DeadLetterPage, QueuePage, QueueState, ReceiptHistory } from '@/lib/queries/settlements-types';
import { readPrefix } from '@/lib/reads/read-query';
import { deadLetterListQuery, receiptHistoryQuery, settlementQueueQuery } from '@/lib/reads/queries';
import { failureCodeWords } from '@/lib/domain/settlement-failure';
import { deadLettersHref, queueHref } from '@/lib/url-state/settlements';
import { NoMatches } from '../ui/states';
import { filterParams, type FilterKey, type FilterValues } from './filter-params';
import { LINK, receiptHref } from './links';

const STATE_LABEL: Record<QueueState, string> = { due: 'Due', leased: 'Leased', retry_scheduled: 'Retry scheduled' };
const FILTER_WORDS: Record<Exclude<FilterKey, 'q'>, string> = {
  reason: 'reason',
  minAttempts: 'attempts at least',
  maxAttempts: 'attempts at most',
  minAge: 'age at least',
  maxAge: 'age at most',
};
const BUTTON =
  'rounded-md border border-zinc-300 px-2 py-1 text-sm font-medium text-zinc-900 no-underline hover:bg-zinc-100 ' +
  'dark:border-zinc-700 dark:text-zinc-100 dark:hover:bg-zinc-800';

type View = { kind: 'queue'; state: QueueState | 'all' } | { kind: 'dead-letters' };

/** The receipt's history by its exact id, or null when Keel knows no such receipt. */
async function readReceipt(receiptId: string, signal: AbortSignal): Promise<ReceiptHistory | null> {
  try {
    return await readJson<ReceiptHistory>(receiptHistoryQuery.url({ receiptId }), {}, signal);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return null;
    throw error;
  }
}

/**
 * Which of the other filters hide the receipt from its own list: each is dropped in turn
 * and the list asked again, so the answer comes from the server's own rules. When no
 * single one does, they hide it together.
 */
async function hidingFilters(
  receiptId: string,
  values: FilterValues,
  list: { path: string; state?: QueueState },
  signal: AbortSignal,
): Promise<FilterKey[]> {
  const others = (Object.keys(values) as FilterKey[]).filter((key) => key !== 'q' && values[key]);
  const shows = async (without: FilterKey[]) => {
    const kept = Object.fromEntries(Object.entries(values).filter(([key]) => !without.includes(key as FilterKey)));
    const page = await readJson<QueuePage | DeadLetterPage>(
      list.path,
      filterParams(kept, { state: list.state }),
      signal,
    );
    return page.rows.some((row) => row.receiptId === receiptId);
  };
  const single: FilterKey[] = [];
  for (const key of others) if (await shows([key])) single.push(key);
  return single.length > 0 ? single : others;
}

const describe = (values: FilterValues, keys: FilterKey[]) =>
  keys.flatMap((key) => (key === 'q' ? [] : [`${FILTER_WORDS[key]} ${values[key]}`]));

/**
 * What an empty list says when its search names one receipt exactly and that receipt
 * exists: where it is, which filter (or tab) hides it, and a link that clears just that,
 * so a filter carried from another view never hides the receipt the user is looking for.
 * Without such a receipt it is the ordinary "no matches" message.
 */
export function HiddenReceipt({
  view,
  values,
  noun,
  onClear,
}: {
  view: View;
  values: FilterValues;
  noun: string;
  onClear: () => void;
}) {
  const receiptId = values.q ?? '';
  const receipt = useQuery({
    queryKey: receiptHistoryQuery.key({ receiptId }),
    queryFn: ({ signal }) => readReceipt(receiptId, signal),
    enabled: receiptId !== '',
    retry: false,
  });
  const history = receipt.data;
  // The list the receipt belongs on now, and whether this view is that list.
  const home = history?.queued
    ? { path: settlementQueueQuery.path, state: history.queued.state }
    : history?.deadLetter
      ? { path: deadLetterListQuery.path }
      : null;
  const onHomeList = home !== null && (view.kind === 'queue') === (home.path === settlementQueueQuery.path);
  const hidden = useQuery({
    // Under the settlements' prefix, so an action on a settlement asks again.
    queryKey: [
      ...readPrefix('/api/settlements'),
      'hidden-by',
      { receiptId, list: home?.path, state: home?.state, ...values },
    ],
    queryFn: ({ signal }) => hidingFilters(receiptId, values, home!, signal),
    enabled: onHomeList,
    retry: false,
  });
  if (!history) return <NoMatches noun={noun} onClear={onClear} />;

  const where = history.queued
    ? `queued (${STATE_LABEL[history.queued.state].toLowerCase()})`
    : history.deadLetter
      ? `dead-lettered (reason ${history.deadLetter.reason}: ${failureCodeWords(history.deadLetter.reason)})`
      : 'neither queued nor dead-lettered';
  const history_ = (
    <Link href={receiptHref(receiptId)} prefetch={false} className={LINK}>
      Open its history
    </Link>
  );

  if (!home) {
    return (
      <Notice>
        No {noun} match these filters. Receipt <span className="font-mono text-xs">{receiptId}</span> is {where}.{' '}
        {history_}
      </Notice>
    );
  }
  if (!onHomeList) {
    const href = home.state ? queueHref({ q: receiptId, state: home.state }) : deadLettersHref({ q: receiptId });
    return (
      <Notice>
        No {noun} match these filters. Receipt <span className="font-mono text-xs">{receiptId}</span> is {where}, so it
        is not on this list.{' '}
        <Link href={href} className={BUTTON}>
          {home.state ? `Show it in the queue (${STATE_LABEL[home.state]})` : 'Show it in the dead letters'}
        </Link>{' '}
        {history_}
      </Notice>
    );
  }

  if (hidden.isPending) return <Notice>Looking for receipt {receiptId}…</Notice>;
  const wrongTab =
    view.kind === 'queue' && view.state !== 'all' && view.state !== home.state
      ? STATE_LABEL[view.state as QueueState]
      : null;
  const filters = hidden.data ?? [];
  const clearing = describe(values, filters);
  if (!wrongTab && clearing.length === 0) return <NoMatches noun={noun} onClear={onClear} />;
  const kept = Object.fromEntries(Object.entries(values).filter(([key]) => !filters.includes(key as FilterKey)));
  const href = view.kind === 'queue' ? queueHref({ ...kept, state: home.state }) : deadLettersHref(kept);
  const hiders = [...(wrongTab ? [`the ${wrongTab} tab`] : []), ...clearing.map((words) => `the filter ${words}`)];
  const fix = [
    clearing.length ? `Clear ${joinWords(clearing)}` : null,
    home.state && wrongTab ? `open the ${STATE_LABEL[home.state]} tab` : null,
  ].filter((f) => f !== null);
  const label = fix.join(' and ');
  return (
    <Notice>
      No {noun} match these filters. Receipt <span className="font-mono text-xs">{receiptId}</span> is {where}, hidden
      by {joinWords(hiders)}.{' '}
      <Link href={href} className={BUTTON} data-testid="show-hidden-receipt">
        {label.charAt(0).toUpperCase() + label.slice(1)}
      </Link>{' '}
      {history_}
    </Notice>
  );
}

const joinWords = (words: string[]) =>
  words.length < 2 ? words.join('') : `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`;

function Notice({ children }: { children: ReactNode }) {
  return (
    <span
      role="status"
      className="inline-flex flex-wrap items-center justify-center gap-x-2 gap-y-1 text-zinc-800 dark:text-zinc-200"
    >
      {children}
    </span>
  );
}
