'use client';

import { useRouter } from 'next/navigation';
import { useEffect, useRef, useState, type ReactNode } from 'react';
import { GO } from './shortcut-keys';

const typing = (target: EventTarget | null) =>
  target instanceof HTMLElement && (['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName) || target.isContentEditable);

/** `?` lists the shortcuts (`children`: the list, from shortcut-list.tsx), `/` focuses the page's search, `g` then a letter goes to a page. */
export function KeyboardShortcuts({ children }: { children: ReactNode }) {
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
      {children}
    </dialog>
  );
}
