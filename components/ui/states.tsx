import type { ReactNode } from 'react';
import { Button } from './button';

const ALERT_BOX =
  'rounded-lg border border-red-300 bg-red-50 p-4 text-sm text-red-900 dark:border-red-800 dark:bg-red-950 ' +
  'dark:text-red-100';

export function ErrorState({ title = 'Could not load this view', detail }: { title?: string; detail: ReactNode }) {
  return (
    <div role="alert" className={ALERT_BOX}>
      <div className="font-medium">{title}</div>
      <div className="mt-1">{detail}</div>
    </div>
  );
}

/**
 * A list's first read failed, so there is nothing to show: what could not be loaded (`what`, with the
 * refusal's code when the API gave one), the error's message and a button to read again.
 */
export function LoadFailed({
  what,
  code,
  message,
  onRetry,
}: {
  what: string;
  code: string | undefined;
  message: string;
  onRetry: () => void;
}) {
  return (
    <div role="alert" className={ALERT_BOX}>
      <p className="font-medium">{`Could not load ${what}${code ? ` (${code})` : ''}.`}</p>
      <p className="mt-1">{message}</p>
      <Button className="mt-3" onClick={onRetry}>
        Try again
      </Button>
    </div>
  );
}

export function LoadingRow({ columns }: { columns: number }) {
  return (
    <tr>
      <td colSpan={columns} className="px-3 py-6 text-center text-zinc-600 dark:text-zinc-400">
        Loading…
      </td>
    </tr>
  );
}

/**
 * What an empty list says when filters are applied: the filters match nothing (not
 * "Nothing here yet", which is for a table with no rows at all), with a way back.
 */
export function NoMatches({ noun, onClear }: { noun: string; onClear: () => void }) {
  return (
    <span className="inline-flex flex-wrap items-center justify-center gap-2">
      <span>No {noun} match these filters.</span>
      <button
        type="button"
        onClick={onClear}
        className={
          'rounded-md border border-zinc-300 px-2 py-1 text-sm font-medium text-zinc-900 hover:bg-zinc-100 ' +
          'dark:border-zinc-700 dark:text-zinc-100 dark:hover:bg-zinc-800'
        }
      >
        Clear filters
      </button>
    </span>
  );
}

/** Whether any filter is set; the keyset cursor is a position, not a filter. */
export const hasFilters = (values: Record<string, unknown>) =>
  Object.entries(values).some(
    ([key, value]) => key !== 'cursor' && value !== null && value !== undefined && value !== '',
  );
