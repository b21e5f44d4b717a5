'use client';

import { useCallback, useEffect, useMemo, useRef, useState, useSyncExternalStore } from 'react';

/**
 * Calm lists (docs/console.md#live-updates): a live list that someone is reading keeps the
 * rows it shows. While the pointer is over the table, keyboard focus is in it, or the page is scrolled
 * past the table's top, new data is held: the rows shown keep their places and their text,
 * and "Updates waiting (n)" (components/ui/table.tsx) says how many rows differ and applies
 * them. Leaving the table, or scrolling back to its top, applies them too. The reader's own
 * doing is never held: a new filter or page, and whatever follows their own action.
 */

/** What a view hands to its DataTable (`calm={calm}`). */
export interface CalmRows {
  /** Rows new, changed or gone in the data held back; 0 when nothing waits. */
  waiting: number;
  apply: () => void;
  /** The list's box: where the pointer and focus are watched, and whose top the page's scroll is compared with. */
  ref: (element: HTMLElement | null) => void;
}

// Bumped when the reader's own action returns: the data that follows it is shown at once.
let releases = 0;
const releaseListeners = new Set<() => void>();

/** The reader acted (components/actions/use-server-action.ts): what follows is theirs to see. */
export function releaseCalmRows(): void {
  releases += 1;
  for (const listener of releaseListeners) listener();
}

const subscribeReleases = (listener: () => void) => {
  releaseListeners.add(listener);
  return () => releaseListeners.delete(listener);
};

interface Held<T> {
  shown: T | undefined;
  /** The view's key (filters, cursor) the shown data was read for. */
  key: string;
  release: number;
}

/**
 * The data a live list shows: `result.data` while nobody reads the list, else the data
 * shown when reading began. `key` names what the reader asked for (the filters and cursor):
 * data for a new key is shown at once. `rowsOf` and `rowKey` count what waits.
 */
export function useCalmRows<T, R>(
  result: { data: T | undefined; isPlaceholderData?: boolean },
  key: unknown,
  rowsOf: (data: T) => readonly R[],
  rowKey: (row: R) => string | number,
): [T | undefined, CalmRows] {
  const { data, isPlaceholderData = false } = result;
  const [pointer, setPointer] = useState(false);
  const [focus, setFocus] = useState(false);
  const [scrolled, setScrolled] = useState(false);
  const release = useSyncExternalStore(
    subscribeReleases,
    () => releases,
    () => 0,
  );
  const keyText = JSON.stringify(key ?? null);
  const [held, setHeld] = useState<Held<T>>(() => ({ shown: data, key: keyText, release }));
  const holding = pointer || focus || scrolled;

  // Adjusting state to new data during render: the held rows never flash the new ones first.
  if (
    data !== held.shown &&
    (!holding || held.shown === undefined || (keyText !== held.key && !isPlaceholderData) || release !== held.release)
  ) {
    setHeld({ shown: data, key: isPlaceholderData ? held.key : keyText, release });
  }

  const latest = useRef({ data, keyText, release, isPlaceholderData });
  latest.current = { data, keyText, release, isPlaceholderData };
  const apply = useCallback(() => {
    const now = latest.current;
    setHeld((h) => ({ shown: now.data, key: now.isPlaceholderData ? h.key : now.keyText, release: now.release }));
  }, []);

  const waiting = useMemo(() => {
    if (data === undefined || held.shown === undefined || data === held.shown) return 0;
    return rowsDiffering(rowsOf(held.shown), rowsOf(data), rowKey);
  }, [data, held.shown, rowsOf, rowKey]);

  const [element, setElement] = useState<HTMLElement | null>(null);
  useEffect(() => {
    if (!element) return;
    const check = () => setScrolled(element.getBoundingClientRect().top < 0);
    const enter = () => setPointer(true);
    const leave = () => setPointer(false);
    // Keyboard focus only: a click leaves focus in the table, and a pointer that has left should not hold it.
    const focusIn = (event: FocusEvent) => setFocus((event.target as Element).matches(':focus-visible'));
    const focusOut = (event: FocusEvent) => {
      if (!element.contains(event.relatedTarget as Node | null)) setFocus(false);
    };
    check();
    window.addEventListener('scroll', check, { passive: true });
    window.addEventListener('resize', check, { passive: true });
    element.addEventListener('pointerenter', enter);
    element.addEventListener('pointerleave', leave);
    element.addEventListener('focusin', focusIn);
    element.addEventListener('focusout', focusOut);
    return () => {
      window.removeEventListener('scroll', check);
      window.removeEventListener('resize', check);
      element.removeEventListener('pointerenter', enter);
      element.removeEventListener('pointerleave', leave);
      element.removeEventListener('focusin', focusIn);
      element.removeEventListener('focusout', focusOut);
    };
  }, [element]);

  const calm = useMemo<CalmRows>(() => ({ waiting, apply, ref: setElement }), [waiting, apply]);
  return [held.shown, calm];
}

/** How many rows are new, gone or changed between two lists, by key. */
export function rowsDiffering<R>(
  shown: readonly R[],
  latest: readonly R[],
  rowKey: (row: R) => string | number,
): number {
  const before = new Map(shown.map((row) => [rowKey(row), JSON.stringify(row)]));
  let differing = 0;
  for (const row of latest) {
    const key = rowKey(row);
    const was = before.get(key);
    if (was === undefined || was !== JSON.stringify(row)) differing += 1;
    before.delete(key);
  }
  return differing + before.size;
}
