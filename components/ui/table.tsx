import type { ReactNode } from 'react';

export function DataTable({ caption, head, children, empty }: { caption: string; head: string[]; children: ReactNode; empty?: boolean }) {
  return (
    // Focusable, so a keyboard user can scroll a table wider than the screen.
    <div tabIndex={0} role="region" aria-label={caption} className="overflow-x-auto rounded-lg border border-zinc-200 bg-white dark:border-zinc-800 dark:bg-zinc-900">
      <table className="min-w-full text-left text-sm">
        <caption className="sr-only">{caption}</caption>
        <thead className="border-b border-zinc-200 bg-zinc-50 text-xs uppercase tracking-wide text-zinc-600 dark:border-zinc-800 dark:bg-zinc-900 dark:text-zinc-400">
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
                Nothing here yet.
              </td>
            </tr>
          ) : (
            children
          )}
        </tbody>
      </table>
    </div>
  );
}

export function Cell({ children, mono }: { children: ReactNode; mono?: boolean }) {
  return <td className={`whitespace-nowrap px-3 py-2 ${mono ? 'font-mono text-xs' : ''}`}>{children}</td>;
}
