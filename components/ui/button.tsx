import type { ButtonHTMLAttributes } from 'react';

const VARIANTS = {
  primary: 'bg-sky-700 text-white hover:bg-sky-800 disabled:bg-sky-700/60',
  danger: 'bg-red-700 text-white hover:bg-red-800 disabled:bg-red-700/60',
  // A disabled button (a pager at its end, a decision four eyes
  // forbid) must look unavailable, not merely refuse the click.
  secondary:
    'border border-zinc-300 bg-white text-zinc-900 hover:bg-zinc-100 disabled:border-dashed disabled:text-zinc-500 ' +
    'disabled:hover:bg-white dark:border-zinc-700 dark:bg-zinc-900 dark:text-zinc-100 dark:hover:bg-zinc-800 ' +
    'dark:disabled:text-zinc-500 dark:disabled:hover:bg-zinc-900',
} as const;

export function Button({
  variant = 'secondary',
  className = '',
  ...props
}: ButtonHTMLAttributes<HTMLButtonElement> & { variant?: keyof typeof VARIANTS }) {
  return (
    <button
      type="button"
      {...props}
      className={
        `inline-flex items-center justify-center rounded-md px-3 py-1.5 text-sm font-medium ` +
        `disabled:cursor-not-allowed ${VARIANTS[variant]} ${className}`
      }
    />
  );
}
