'use client';

import { useRouter } from 'next/navigation';
import { useEffect, useRef, useState, type ReactNode } from 'react';
import { CONSOLE_SEARCH_ID, GO } from './shortcut-keys';

/**
 * Whether a key goes to a field rather than to the shortcuts: the event's target, or
 * the focused element (a key can reach the window from elsewhere while a field has focus).
 */
const inField = (element: Element | null) =>
  element instanceof HTMLElement &&
  (['INPUT', 'TEXTAREA', 'SELECT'].includes(element.tagName) || element.isContentEditable);
const typing = (event: KeyboardEvent) =>
  inField(event.target instanceof Element ? event.target : null) || inField(document.activeElement);

/**
 * `?` lists the shortcuts (`children`: the list, from shortcut-list.tsx),
 * `/` focuses the header's search, `g` then a letter goes to a page.
 */
export function KeyboardShortcuts({ children }: { children: ReactNode }) {
  const router = useRouter();
  const dialog = useRef<HTMLDialogElement>(null);
  const [pendingG, setPendingG] = useState(false);
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | null = null;
    const onKey = (event: KeyboardEvent) => {
      if (event.metaKey || event.ctrlKey || event.altKey || event.isComposing) return;
      if (typing(event)) {
        // A `g` typed before the field took focus must not turn the field's next letter into a jump.
        if (pendingG) setPendingG(false);
        return;
      }
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
        const search = document.getElementById(CONSOLE_SEARCH_ID);
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
      className={
        'm-auto w-full max-w-md rounded-lg border border-zinc-200 bg-white p-5 text-zinc-900 shadow-xl ' +
        'backdrop:bg-black/40 dark:border-zinc-700 dark:bg-zinc-900 dark:text-zinc-100'
      }
    >
      {children}
    </dialog>
  );
}
