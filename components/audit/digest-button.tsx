'use client';

import { useToast } from '../ui/toast';

/** A digest shortened to its first 12 characters; the full value is on hover and one click copies it. */
export function DigestButton({ digest }: { digest: string }) {
  const toast = useToast();
  async function copy() {
    try {
      await navigator.clipboard.writeText(digest);
      toast({ tone: 'info', title: 'Digest copied', detail: digest });
    } catch {
      toast({ tone: 'error', title: 'Could not copy the digest', detail: digest });
    }
  }
  return (
    <button
      type="button"
      onClick={copy}
      title={digest}
      aria-label={`Copy digest ${digest}`}
      data-digest={digest}
      className={
        'rounded font-mono text-xs text-sky-800 underline decoration-dotted hover:text-sky-950 dark:text-sky-300 ' +
        'dark:hover:text-sky-100'
      }
    >
      {digest.length > 12 ? `${digest.slice(0, 12)}…` : digest}
    </button>
  );
}
