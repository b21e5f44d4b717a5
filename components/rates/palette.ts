/** Line colours, light and dark, each with 3:1 or more against its chart's background, and their legend swatches. */
export const LINE_COLORS = [
  { light: '#0369a1', dark: '#38bdf8', swatch: 'bg-sky-700 dark:bg-sky-400' },
  { light: '#b45309', dark: '#fbbf24', swatch: 'bg-amber-700 dark:bg-amber-400' },
  { light: '#be123c', dark: '#fb7185', swatch: 'bg-rose-700 dark:bg-rose-400' },
  { light: '#047857', dark: '#34d399', swatch: 'bg-emerald-700 dark:bg-emerald-400' },
  { light: '#6d28d9', dark: '#a78bfa', swatch: 'bg-violet-700 dark:bg-violet-400' },
  { light: '#52525b', dark: '#a1a1aa', swatch: 'bg-zinc-600 dark:bg-zinc-400' },
] as const;

/** The dashed marker lines: takeovers and bulk jobs. */
export const MARKER_COLORS = {
  takeover: { light: '#a21caf', dark: '#f0abfc', swatch: 'border-fuchsia-700 dark:border-fuchsia-300' },
  bulk: { light: '#c2410c', dark: '#fdba74', swatch: 'border-orange-700 dark:border-orange-300' },
} as const;
