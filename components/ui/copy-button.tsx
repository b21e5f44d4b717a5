'use client';

import { useState } from 'react';

/** Copies a value that the page shows only in part (a retry key's first 12 digits). */
export function CopyButton({ value, label }: { value: string; label: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      aria-label={label}
      onClick={async () => {
        await navigator.clipboard.writeText(value);
        setCopied(true);
        setTimeout(() => setCopied(false), 1_500);
      }}
      className={
        'ml-2 rounded border border-zinc-300 px-1.5 py-0.5 text-xs hover:bg-zinc-100 dark:border-zinc-700 ' +
        'dark:hover:bg-zinc-800'
      }
    >
      {copied ? 'Copied' : 'Copy'}
    </button>
  );
}
