import type { ReactNode } from 'react';

export function ErrorState({ title = 'Could not load this view', detail }: { title?: string; detail: ReactNode }) {
  return (
    <div role="alert" className="rounded-lg border border-red-300 bg-red-50 p-4 text-sm text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100">
      <div className="font-medium">{title}</div>
      <div className="mt-1">{detail}</div>
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

/** A page reached with filters that do not parse: it says which and why, and queries nothing. */
export function InvalidFilters({ issues }: { issues: { path: PropertyKey[]; message: string }[] }) {
  return <ErrorState title="These filters are not valid" detail={issues.map((i) => `${i.path.map(String).join('.')}: ${i.message}`).join('; ')} />;
}
