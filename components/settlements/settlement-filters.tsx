'use client';

import { useQueryStates } from 'nuqs';
import type { FormEvent } from 'react';
import { FAILURE_CODES } from '@/lib/domain/settlement-vocabulary';
import { FILTER_KEYS } from '@/lib/queries/settlements-filter-types';
import { fieldProblem } from '@/lib/url-state/filter-words';
import { SETTLEMENT_FILTER_WORDS, settlementFiltersSearch } from '@/lib/url-state/settlements';
import { Button } from '../ui/button';
import type { FilterKey, FilterValues } from './filter-params';

/** The filters shared by the queue and the dead letters, in the URL (so a link reproduces the view). */
export function useSettlementFilters() {
  const [state, setState] = useQueryStates(settlementFiltersSearch, { history: 'push' });
  const values: FilterValues = {};
  for (const key of FILTER_KEYS) if (state[key]) values[key] = state[key]!;
  /** New filters always start from the first page. */
  const apply = (next: FilterValues) =>
    void setState({
      ...Object.fromEntries(FILTER_KEYS.map((k) => [k, next[k] || null])),
      reason: FAILURE_CODES.find((code) => code === next.reason) ?? null,
      cursor: null,
    });
  return {
    values,
    search: state,
    cursor: state.cursor,
    apply,
    setCursor: (cursor: string | null) => void setState({ cursor }),
  };
}

const FIELD =
  'mt-1 block rounded-md border border-zinc-300 bg-white px-2 py-1.5 text-sm dark:border-zinc-700 dark:bg-zinc-950';
const LABEL = 'block text-xs font-medium text-zinc-700 dark:text-zinc-300';

/**
 * One form for every filter, applied together on submit. Keyed by the current values,
 * so Back and Forward refill it. `ageMeaning` says what age measures on this view.
 */
export function SettlementFilterForm({
  label,
  values,
  ageMeaning,
  fieldErrors,
  onApply,
}: {
  label: string;
  values: FilterValues;
  ageMeaning: string;
  fieldErrors?: Record<string, string[]>;
  onApply: (next: FilterValues) => void;
}) {
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    // The receipt prefix is kept as typed apart from outer spaces; ids never hold them.
    onApply(Object.fromEntries(FILTER_KEYS.map((k) => [k, String(form.get(k) ?? '').trim()])));
  }
  const field = (
    name: FilterKey,
    text: string,
    props: { placeholder?: string; width?: string; inputMode?: 'numeric' } = {},
  ) => {
    const message = fieldErrors?.[name]?.[0];
    const error = message ? fieldProblem(SETTLEMENT_FILTER_WORDS, name, message) : undefined;
    return (
      <div>
        <label htmlFor={`filter-${name}`} className={LABEL}>
          {text}
        </label>
        <input
          id={`filter-${name}`}
          name={name}
          defaultValue={values[name] ?? ''}
          placeholder={props.placeholder}
          inputMode={props.inputMode}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? `filter-${name}-error` : 'filter-age-meaning'}
          className={`${FIELD} ${props.width ?? 'w-28'}`}
        />
        {error ? (
          <p id={`filter-${name}-error`} className="mt-1 w-40 text-xs text-red-700 dark:text-red-400">
            {error}
          </p>
        ) : null}
      </div>
    );
  };
  return (
    <form key={JSON.stringify(values)} role="search" aria-label={label} onSubmit={submit} className="space-y-2">
      <div className="flex flex-wrap items-end gap-3">
        {field('q', 'Receipt id starts with', { placeholder: 'rcpt_…', width: 'w-48' })}
        <div>
          <label htmlFor="filter-reason" className={LABEL}>
            Reason code
          </label>
          <select id="filter-reason" name="reason" defaultValue={values.reason ?? ''} className={`${FIELD} w-52`}>
            <option value="">Any reason</option>
            {FAILURE_CODES.map((code) => (
              <option key={code} value={code}>
                {code}
              </option>
            ))}
          </select>
        </div>
        {field('minAttempts', 'Attempts at least', { inputMode: 'numeric', width: 'w-24' })}
        {field('maxAttempts', 'Attempts at most', { inputMode: 'numeric', width: 'w-24' })}
        {field('minAge', 'Age at least', { placeholder: 'e.g. 30m' })}
        {field('maxAge', 'Age at most', { placeholder: 'e.g. 2d' })}
        <div className="flex gap-2">
          <Button type="submit" variant="primary">
            Apply filters
          </Button>
          <Button onClick={() => onApply({})}>Clear</Button>
        </div>
      </div>
      <p id="filter-age-meaning" className="text-xs text-zinc-600 dark:text-zinc-400">
        {ageMeaning} Ages are written 45s, 30m, 6h or 2d and measured by the server&apos;s clock.
      </p>
    </form>
  );
}
