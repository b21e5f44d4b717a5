/** A filter chip: one choice of a filter, shown pressed (aria-pressed) while it is the one chosen. */
export const CHIP =
  'inline-flex items-center gap-1.5 rounded-md border border-zinc-300 bg-white px-2.5 py-1 text-sm hover:bg-zinc-100 ' +
  'aria-pressed:border-sky-800 aria-pressed:bg-sky-100 aria-pressed:text-sky-950 dark:border-zinc-700 ' +
  'dark:bg-zinc-900 dark:hover:bg-zinc-800 dark:aria-pressed:border-sky-300 dark:aria-pressed:bg-sky-950 ' +
  'dark:aria-pressed:text-sky-100';
