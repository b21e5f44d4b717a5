import Link from 'next/link';
import type { ReactNode } from 'react';

export function PageHeader({
  title,
  description,
  children,
}: {
  title: string;
  description?: string;
  children?: ReactNode;
}) {
  return (
    <div className="mb-6 flex flex-wrap items-end justify-between gap-4">
      <div className="min-w-0 max-w-full">
        <h1 className="text-2xl font-semibold tracking-tight [overflow-wrap:anywhere]">{title}</h1>
        {description ? <p className="mt-1 text-sm text-zinc-600 dark:text-zinc-400">{description}</p> : null}
      </div>
      {children}
    </div>
  );
}

/** A total; with `href` the whole card is a link to the list it counts (as in Sidekiq's and Oban's dashboards). */
export function StatCard({
  label,
  value,
  hint,
  href,
}: {
  label: string;
  value: ReactNode;
  hint?: string;
  href?: string;
}) {
  const body = (
    <>
      <div className="text-xs font-medium uppercase tracking-wide text-zinc-600 dark:text-zinc-400">{label}</div>
      <div className="mt-1 text-2xl font-semibold tabular-nums">{value}</div>
      {hint ? <div className="mt-1 text-xs text-zinc-600 dark:text-zinc-400">{hint}</div> : null}
    </>
  );
  const box = 'block rounded-lg border border-zinc-200 bg-white p-4 dark:border-zinc-800 dark:bg-zinc-900';
  return href ? (
    <Link
      href={href}
      className={
        `${box} hover:border-sky-700 hover:bg-sky-50 focus-visible:outline-2 focus-visible:outline-sky-700 ` +
        `dark:hover:border-sky-400 dark:hover:bg-sky-950`
      }
    >
      {body}
    </Link>
  ) : (
    <div className={box}>{body}</div>
  );
}
