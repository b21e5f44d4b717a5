'use client';

import { useRouter } from 'next/navigation';
import { useEffect, useRef, useState } from 'react';
import { Button } from '../ui/button';

const GO: Record<string, { href: string; label: string }> = {
  o: { href: '/', label: 'Overview' },
  e: { href: '/executions', label: 'Executions' },
  k: { href: '/retry-keys', label: 'Retry keys' },
  r: { href: '/recovery', label: 'Recovery' },
  s: { href: '/settlements', label: 'Settlements' },
  a: { href: '/audit', label: 'Audit' },
};

const typing = (target: EventTarget | null) =>
  target instanceof HTMLElement && (['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName) || target.isContentEditable);

/** `?` lists the shortcuts, `/` focuses the page's search, `g` then a letter goes to a page. */
export function KeyboardShortcuts() {
  const router = useRouter();
  const dialog = useRef<HTMLDialogElement>(null);
  const [pendingG, setPendingG] = useState(false);
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | null = null;
    const onKey = (event: KeyboardEvent) => {
      if (event.metaKey || event.ctrlKey || event.altKey || typing(event.target)) return;
      if (pendingG) {
        setPendingG(false);
        const target = GO[event.key];
        if (target) {
          event.preventDefault();
          router.push(target.href);
        }
        return;
      }
      if (event.key === '?') {
        event.preventDefault();
        dialog.current?.showModal();
      } else if (event.key === '/') {
        const search = document.querySelector<HTMLInputElement>('[role="search"] input:not([type="hidden"]), [role="search"] select');
        if (search) {
          event.preventDefault();
          search.focus();
        }
      } else if (event.key === 'g') {
        setPendingG(true);
        timer = setTimeout(() => setPendingG(false), 1_500);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => {
      window.removeEventListener('keydown', onKey);
      if (timer) clearTimeout(timer);
    };
  }, [pendingG, router]);
  return (
    <dialog
      ref={dialog}
      aria-labelledby="shortcuts-title"
      className="m-auto w-full max-w-md rounded-lg border border-zinc-200 bg-white p-5 text-zinc-900 shadow-xl backdrop:bg-black/40 dark:border-zinc-700 dark:bg-zinc-900 dark:text-zinc-100"
    >
      <h2 id="shortcuts-title" className="text-lg font-semibold">Keyboard shortcuts</h2>
      <dl className="mt-3 grid grid-cols-[auto_1fr] gap-x-4 gap-y-1.5 text-sm">
        <dt><kbd className="font-mono">?</kbd></dt>
        <dd>Show this list</dd>
        <dt><kbd className="font-mono">/</kbd></dt>
        <dd>Search or filter on this page</dd>
        {Object.entries(GO).map(([key, target]) => (
          <div key={key} className="contents">
            <dt><kbd className="font-mono">g {key}</kbd></dt>
            <dd>Go to {target.label}</dd>
          </div>
        ))}
        <dt><kbd className="font-mono">Esc</kbd></dt>
        <dd>Close a dialog</dd>
      </dl>
      <form method="dialog" className="mt-4 flex justify-end">
        <Button type="submit">Close</Button>
      </form>
    </dialog>
  );
}
