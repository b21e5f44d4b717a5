'use client';

import { useEffect, useState } from 'react';

/** Light or dark, remembered in a cookie so the server renders the same theme. */
export function ThemeToggle() {
  const [dark, setDark] = useState<boolean | null>(null);
  useEffect(() => setDark(document.documentElement.classList.contains('dark')), []);
  const toggle = () => {
    const next = !document.documentElement.classList.contains('dark');
    document.documentElement.classList.toggle('dark', next);
    // biome-ignore lint/suspicious/noDocumentCookie: one lax, non-secret preference cookie read by the server
    document.cookie = `keel-theme=${next ? 'dark' : 'light'}; path=/; max-age=31536000; samesite=lax`;
    setDark(next);
  };
  return (
    <button
      type="button"
      onClick={toggle}
      aria-pressed={dark ?? undefined}
      className={
        'rounded-md border border-zinc-300 px-2.5 py-1 text-sm hover:bg-zinc-100 dark:border-zinc-700 ' +
        'dark:hover:bg-zinc-800'
      }
    >
      {dark ? 'Light mode' : 'Dark mode'}
    </button>
  );
}
