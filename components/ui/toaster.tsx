'use client';

import { useCallback, useEffect, useRef } from 'react';
import Link from 'next/link';
import { Toaster, toast as sonner, type ExternalToast } from 'sonner';

// sonner and the list it renders, loaded by toast.tsx with the first toast of a page.

type Tone = 'success' | 'error' | 'info';
export interface Toast {
  tone: Tone;
  title: string;
  detail?: string;
  /** Where the outcome can be seen, e.g. the receipt an action changed. */
  link?: { href: string; label: string };
}

const LIFETIME_MS = 6_000;
const tones: Record<Tone, string> = {
  success: 'border-emerald-600 bg-emerald-50 text-emerald-950 dark:bg-emerald-950 dark:text-emerald-50',
  error: 'border-red-600 bg-red-50 text-red-950 dark:bg-red-950 dark:text-red-50',
  info: 'border-sky-600 bg-sky-50 text-sky-950 dark:bg-sky-950 dark:text-sky-50',
};

/** The toasts that close by themselves, by id; focus inside the list holds them open. */
const timed = new Map<string | number, Toast>();

function show(toast: Toast, duration: number, id?: string | number) {
  const { tone, title, detail, link } = toast;
  const linked = link ? (
    <Link href={link.href} prefetch={false} className="mt-1 inline-block text-sm font-medium underline">
      {link.label}
    </Link>
  ) : null;
  // sonner's list is a polite live region and its items carry no role, so a refusal
  // would wait its turn; its title and detail go in an alert of their own instead,
  // which screen readers announce at once.
  const alert = tone === 'error';
  const options: ExternalToast = {
    id,
    description:
      alert || !(detail || linked) ? undefined : (
        <>
          {detail}
          {detail && linked ? <br /> : null}
          {linked}
        </>
      ),
    testId: 'toast',
    duration,
    className: tones[tone],
    onDismiss: (t) => timed.delete(t.id),
    onAutoClose: (t) => timed.delete(t.id),
  };
  if (alert) {
    const content = (
      <div role="alert">
        {title}
        {detail ? <div className="mt-0.5 text-sm font-normal break-words">{detail}</div> : null}
        {linked}
      </div>
    );
    return sonner.error(content, options);
  }
  return tone === 'success' ? sonner.success(title, options) : sonner.info(title, options);
}

/** Errors stay until dismissed; the others close after 6 s, paused while hovered or focused. */
export function push(toast: Toast) {
  const id = show(toast, toast.tone === 'error' ? Infinity : LIFETIME_MS);
  if (toast.tone !== 'error') timed.set(id, toast);
}

/**
 * Outcome messages for actions, through sonner: one live region, newest first, Alt+T
 * focuses it. `onReady` runs once sonner's list is listening (a child's effect runs
 * before its parent's), so the toasts waiting for it arrive in a live region that is
 * already on the page and are announced.
 */
export function Toasts({ onReady }: { onReady: () => (() => void) | undefined }) {
  const focused = useRef(false);
  useEffect(onReady, [onReady]);
  // sonner pauses on hover by itself; on focus (keyboard users) it does not, so the
  // timed toasts are held open while focus is inside the list and get a fresh 6 s after.
  const hold = useCallback((on: boolean) => {
    if (focused.current === on) return;
    focused.current = on;
    for (const [id, toast] of timed) show(toast, on ? Infinity : LIFETIME_MS, id);
  }, []);
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: focus inside holds the toasts; the box takes no input
    <div
      onFocus={() => hold(true)}
      onBlur={(event) => {
        if (!event.currentTarget.contains(event.relatedTarget as Node | null)) hold(false);
      }}
    >
      <Toaster
        position="bottom-right"
        closeButton
        visibleToasts={4}
        toastOptions={{
          unstyled: true,
          classNames: {
            toast:
              'flex w-[var(--width)] max-w-[calc(100vw-2rem)] items-start gap-3 rounded-md border-l-4 p-3 pr-8 shadow',
            title: 'text-sm font-medium',
            description: 'mt-0.5 text-sm break-words',
            icon: 'hidden',
            closeButton:
              'absolute top-2 right-2 rounded px-1 text-sm leading-none hover:bg-black/10 dark:hover:bg-white/10',
          },
        }}
      />
    </div>
  );
}
