'use client';

import type { FormEvent } from 'react';
import { AUDIT_OUTCOMES, type AuditSearch } from '@/lib/domain/audit-search';
import { AUDIT_FILTER_WORDS } from '@/lib/url-state/audit';
import { fieldProblem } from '@/lib/url-state/filter-words';
import { Button } from '../ui/button';
import { useTimeZone } from '../ui/time-zone';

const FIELD =
  'mt-1 block w-44 rounded-md border border-zinc-300 bg-white px-2 py-1.5 text-sm dark:border-zinc-700 ' +
  'dark:bg-zinc-950';

// Events about users and sign-in are listed only to those who manage users: others get examples they can find.
const textFields = (canManageUsers: boolean) =>
  [
    { name: 'actor', label: 'Actor', placeholder: 'username' },
    { name: 'action', label: 'Action', placeholder: canManageUsers ? 'e.g. user.disable' : 'e.g. settlement.replay' },
    { name: 'targetKind', label: 'Target kind', placeholder: canManageUsers ? 'e.g. user' : 'e.g. settlement' },
    { name: 'targetId', label: 'Target id', placeholder: 'exact id' },
  ] as const;

/**
 * The filters as one form: applied together on submit, so typing does not fire a
 * query per keystroke. Keyed by the current filters, so Back/Forward refills it.
 */
export function AuditFilterForm({
  filters,
  fieldErrors,
  canManageUsers,
  onApply,
}: {
  filters: AuditSearch;
  canManageUsers: boolean;
  fieldErrors?: Record<string, string[]>;
  onApply: (next: AuditSearch) => void;
}) {
  // datetime-local has no zone: the fields are read and shown in the user's, named in their labels; the URL keeps
  // the instant in UTC, so a link shows the same events to anyone.
  const tz = useTimeZone();
  const fromLocal = (local: string) => tz.fromInput(local)?.toISOString() ?? '';
  const toLocal = (iso: string | undefined) => (iso ? tz.toInput(new Date(iso)) : '');
  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const text = (k: string) => String(form.get(k) ?? '').trim();
    onApply({
      ...Object.fromEntries(['actor', 'action', 'targetKind', 'targetId', 'outcome'].map((k) => [k, text(k)])),
      from: fromLocal(text('from')),
      to: fromLocal(text('to')),
    });
  }
  const problem = (name: string) => {
    const message = fieldErrors?.[name]?.[0];
    return message ? fieldProblem(AUDIT_FILTER_WORDS, name, message) : undefined;
  };
  // One labelled input with its problem under it: the text filters, and the times as datetime-local.
  const inputField = (
    name: string,
    label: string,
    input: { defaultValue: string; placeholder?: string; type?: 'datetime-local' },
  ) => {
    const error = problem(name);
    return (
      <div key={name}>
        <label htmlFor={`audit-${name}`} className="block text-xs font-medium text-zinc-700 dark:text-zinc-300">
          {label}
        </label>
        <input
          id={`audit-${name}`}
          name={name}
          type={input.type}
          defaultValue={input.defaultValue}
          placeholder={input.placeholder}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? `audit-${name}-error` : undefined}
          className={FIELD}
        />
        {error ? (
          <p id={`audit-${name}-error`} className="mt-1 w-44 text-xs text-red-700 dark:text-red-400">
            {error}
          </p>
        ) : null}
      </div>
    );
  };
  return (
    <form
      key={`${tz.zone} ${JSON.stringify(filters)}`}
      onSubmit={submit}
      aria-label="Audit filters"
      className="mb-4 flex flex-wrap items-end gap-3"
    >
      {textFields(canManageUsers).map((field) =>
        inputField(field.name, field.label, {
          defaultValue: filters[field.name] ?? '',
          placeholder: field.placeholder,
        }),
      )}
      <div>
        <label htmlFor="audit-outcome" className="block text-xs font-medium text-zinc-700 dark:text-zinc-300">
          Outcome
        </label>
        <select id="audit-outcome" name="outcome" defaultValue={filters.outcome ?? ''} className={FIELD}>
          <option value="">Any</option>
          {AUDIT_OUTCOMES.map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      </div>
      {inputField('from', `From (${tz.zone})`, { type: 'datetime-local', defaultValue: toLocal(filters.from) })}
      {inputField('to', `Before (${tz.zone})`, { type: 'datetime-local', defaultValue: toLocal(filters.to) })}
      <div className="flex gap-2">
        <Button type="submit" variant="primary">
          Apply filters
        </Button>
        <Button onClick={() => onApply({})}>Clear</Button>
      </div>
    </form>
  );
}
