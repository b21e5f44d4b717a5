'use client';

import { lazy, Suspense, useLayoutEffect, useRef, useState } from 'react';
import type { ConfirmDialogProps } from './confirm-dialog-radix';

// Radix's AlertDialog (about 14 kB gzip) loads when a page's first dialog opens, not with the page.
const RadixConfirmDialog = lazy(() =>
  import('./confirm-dialog-radix').then((m) => ({ default: m.RadixConfirmDialog })),
);

/**
 * A modal that says exactly what will change before an action runs. Radix's
 * AlertDialog: role alertdialog, named by its own title and described by its body
 * (ids are unique per dialog), focus trapped and returned to the opener, Escape
 * and Cancel close it; while the action is pending it cannot be closed, so the
 * page's state and what is on screen never disagree.
 */
export function ConfirmDialog(props: ConfirmDialogProps) {
  // The dialogs are opened by page state, not by a Radix trigger, so the element that
  // had focus when one opened is remembered here (before the modal has loaded) and
  // gets focus back when it closes.
  const opener = useRef<HTMLElement | null>(null);
  // Once opened the modal stays mounted, so Radix sees it close and returns focus.
  const [opened, setOpened] = useState(props.open);
  if (props.open && !opened) setOpened(true);
  useLayoutEffect(() => {
    if (props.open && document.activeElement instanceof HTMLElement) opener.current = document.activeElement;
  }, [props.open]);
  if (!opened) return null;
  return (
    <Suspense fallback={null}>
      <RadixConfirmDialog {...props} opener={opener} />
    </Suspense>
  );
}
