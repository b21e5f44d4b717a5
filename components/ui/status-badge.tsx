const TONES: Record<string, string> = {
  COMPLETED: 'bg-emerald-100 text-emerald-900 dark:bg-emerald-950 dark:text-emerald-200',
  STARTED: 'bg-sky-100 text-sky-900 dark:bg-sky-950 dark:text-sky-200',
  STARTING: 'bg-sky-100 text-sky-900 dark:bg-sky-950 dark:text-sky-200',
  STOPPING: 'bg-amber-100 text-amber-900 dark:bg-amber-950 dark:text-amber-200',
  STOPPED: 'bg-zinc-200 text-zinc-800 dark:bg-zinc-800 dark:text-zinc-200',
  FAILED: 'bg-red-100 text-red-900 dark:bg-red-950 dark:text-red-200',
  ABANDONED: 'bg-zinc-200 text-zinc-800 dark:bg-zinc-800 dark:text-zinc-200',
  UNKNOWN: 'bg-fuchsia-100 text-fuchsia-900 dark:bg-fuchsia-950 dark:text-fuchsia-200',
  PENDING: 'bg-amber-100 text-amber-900 dark:bg-amber-950 dark:text-amber-200',
  APPLIED: 'bg-emerald-100 text-emerald-900 dark:bg-emerald-950 dark:text-emerald-200',
  REFUSED: 'bg-red-100 text-red-900 dark:bg-red-950 dark:text-red-200',
  CORRUPT: 'bg-red-100 text-red-900 dark:bg-red-950 dark:text-red-200',
  APPROVED: 'bg-emerald-100 text-emerald-900 dark:bg-emerald-950 dark:text-emerald-200',
  REJECTED: 'bg-zinc-200 text-zinc-800 dark:bg-zinc-800 dark:text-zinc-200',
  EXPIRED: 'bg-zinc-200 text-zinc-800 dark:bg-zinc-800 dark:text-zinc-200',
  SUPERSEDED: 'bg-zinc-200 text-zinc-800 dark:bg-zinc-800 dark:text-zinc-200',
  DELIVERED: 'bg-emerald-100 text-emerald-900 dark:bg-emerald-950 dark:text-emerald-200',
  CANCELLED: 'bg-zinc-200 text-zinc-800 dark:bg-zinc-800 dark:text-zinc-200',
};

export function StatusBadge({ status }: { status: string }) {
  return (
    <span
      className={
        `inline-block rounded px-1.5 py-0.5 text-xs font-medium ` +
        `${TONES[status] ?? 'bg-zinc-100 text-zinc-800 dark:bg-zinc-800 dark:text-zinc-200'}`
      }
    >
      {status}
    </span>
  );
}

const STALE =
  'rounded bg-amber-100 px-1.5 py-0.5 text-xs font-medium text-amber-900 dark:bg-amber-950 dark:text-amber-200';

/** Beside an execution's status: no update for longer than the stale threshold. */
export function StaleBadge({ className }: { className?: string }) {
  return <span className={className ? `${className} ${STALE}` : STALE}>stale</span>;
}
