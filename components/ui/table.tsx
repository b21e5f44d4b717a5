import type { ReactNode } from 'react';
import type { CalmRows } from './calm-rows';

/**
 * `empty`: true for a table with no rows at all ("Nothing here yet."), or what to say instead (a filter that matches
 * nothing). `calm`: a live list's hold on its rows (components/ui/calm-rows.ts), with its "Updates waiting" button.
 */
export function DataTable({
  caption,
  head,
  children,
  empty,
  calm,
}: {
  caption: string;
  head: string[];
  children: ReactNode;
  empty?: boolean | ReactNode;
  calm?: CalmRows;
}) {
  const table = (
    // Focusable, so a keyboard user can scroll a table wider than the screen; the table
    // scrolls inside this box (never the page) and its first, key column stays pinned.
    <div
      tabIndex={0}
      role="region"
      aria-label={caption}
      className={
        'max-w-full overflow-x-auto rounded-lg border border-zinc-200 ' +
        'bg-white dark:border-zinc-800 dark:bg-zinc-900'
      }
    >
      <table className={`min-w-full text-left text-sm ${PINNED}`}>
        <caption className="sr-only">{caption}</caption>
        <thead
          className={
            'border-b border-zinc-200 bg-zinc-50 text-xs uppercase tracking-wide text-zinc-600 dark:border-zinc-800 ' +
            'dark:bg-zinc-900 dark:text-zinc-400'
          }
        >
          <tr>
            {head.map((h) => (
              <th key={h} scope="col" className="px-3 py-2 font-medium">
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody className="divide-y divide-zinc-100 dark:divide-zinc-800">
          {empty ? (
            <tr>
              <td colSpan={head.length} className="px-3 py-8 text-center text-zinc-600 dark:text-zinc-400">
                {empty === true ? 'Nothing here yet.' : empty}
              </td>
            </tr>
          ) : (
            children
          )}
        </tbody>
      </table>
    </div>
  );
  if (!calm) return table;
  return (
    <div ref={calm.ref}>
      {/* No height of its own, so the rows never move when the button comes: it sits just above the table's
          top corner and, while the list scrolls, at the top of the window. */}
      <div className="sticky top-9 z-10 flex h-0 justify-end">
        {calm.waiting > 0 ? (
          <button
            type="button"
            onClick={calm.apply}
            className={
              '-translate-y-[calc(100%+0.25rem)] rounded-md border border-sky-700 bg-sky-50 px-2 py-0.5 text-xs ' +
              'font-medium text-sky-900 ' +
              'shadow-sm hover:bg-sky-100 dark:border-sky-300 dark:bg-sky-950 dark:text-sky-100 ' +
              'dark:hover:bg-sky-900'
            }
          >
            Updates waiting ({calm.waiting.toLocaleString('en-US')})
          </button>
        ) : null}
      </div>
      {/* Said once when updates begin to wait, not at every count. */}
      <span role="status" className="sr-only">
        {calm.waiting > 0 ? `Updates waiting for ${caption}` : ''}
      </span>
      {table}
    </div>
  );
}

/** The first cell of each row sticks to the left edge of the scroll box, on the row's own background. */
const PINNED =
  '[&_tr>:first-child:not([colspan])]:sticky [&_tr>:first-child:not([colspan])]:left-0 ' +
  '[&_tr>:first-child:not([colspan])]:z-[1] [&_tbody_tr>:first-child]:bg-white ' +
  'dark:[&_tbody_tr>:first-child]:bg-zinc-900 [&_thead_tr>:first-child]:bg-zinc-50 ' +
  'dark:[&_thead_tr>:first-child]:bg-zinc-900 ' +
  '[&_tr>:first-child:not([colspan])]:shadow-[inset_-1px_0_0_var(--color-zinc-200)] ' +
  'dark:[&_tr>:first-child:not([colspan])]:shadow-[inset_-1px_0_0_var(--color-zinc-800)]';

/** A cell; `wrap` lets long text break onto more lines (at least 12rem wide) instead of widening the table. */
export function Cell({ children, mono, wrap }: { children: ReactNode; mono?: boolean; wrap?: boolean }) {
  return (
    <td
      className={
        `px-3 py-2 ${wrap ? 'min-w-48 whitespace-normal break-words' : 'whitespace-nowrap'} ` +
        `${mono ? 'font-mono text-xs' : ''}`
      }
    >
      {children}
    </td>
  );
}
