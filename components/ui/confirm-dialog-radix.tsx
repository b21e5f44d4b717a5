'use client';

import * as AlertDialog from '@radix-ui/react-alert-dialog';
import type { ReactNode, RefObject } from 'react';
import { Button } from './button';

export interface ConfirmDialogProps {
  open: boolean;
  title: string;
  children: ReactNode;
  confirmLabel: string;
  tone?: 'primary' | 'danger';
  pending?: boolean;
  canConfirm?: boolean;
  /** Room for a table (a bulk preview's sample): 48rem instead of 32rem, still within the screen. */
  wide?: boolean;
  onConfirm: () => void;
  onClose: () => void;
}

/** ConfirmDialog's modal, loaded when a dialog first opens (confirm-dialog.tsx says what it does). */
export function RadixConfirmDialog({
  open,
  title,
  children,
  confirmLabel,
  tone = 'primary',
  pending,
  canConfirm = true,
  wide = false,
  onConfirm,
  onClose,
  opener,
}: ConfirmDialogProps & { opener: RefObject<HTMLElement | null> }) {
  return (
    <AlertDialog.Root
      open={open}
      onOpenChange={(next) => {
        if (!next && !pending) onClose();
      }}
    >
      <AlertDialog.Portal>
        <AlertDialog.Overlay className="fixed inset-0 z-40 bg-black/40" />
        <AlertDialog.Content
          onCloseAutoFocus={(event) => {
            event.preventDefault();
            if (opener.current?.isConnected) opener.current.focus();
            opener.current = null;
          }}
          onEscapeKeyDown={(event) => {
            if (pending) event.preventDefault();
          }}
          className={
            `fixed top-1/2 left-1/2 z-50 flex max-h-[calc(100dvh-2rem)] w-[calc(100vw-2rem)] ` +
            `${wide ? 'max-w-3xl' : 'max-w-lg'} -translate-x-1/2 -translate-y-1/2 flex-col overflow-y-auto ` +
            `rounded-lg border border-zinc-200 bg-white text-zinc-900 shadow-xl dark:border-zinc-700 ` +
            `dark:bg-zinc-900 dark:text-zinc-100`
          }
        >
          <form
            onSubmit={(event) => {
              event.preventDefault();
              if (canConfirm && !pending) onConfirm();
            }}
            className="min-w-0 p-5"
          >
            <AlertDialog.Title className="text-lg font-semibold break-words">{title}</AlertDialog.Title>
            <AlertDialog.Description asChild>
              <div className="mt-3 min-w-0 space-y-3 text-sm break-words">{children}</div>
            </AlertDialog.Description>
            <div className="mt-5 flex flex-wrap justify-end gap-2">
              <AlertDialog.Cancel asChild>
                <Button disabled={pending}>Cancel</Button>
              </AlertDialog.Cancel>
              <Button type="submit" variant={tone} disabled={!canConfirm || pending}>
                {pending ? 'Working…' : confirmLabel}
              </Button>
            </div>
          </form>
        </AlertDialog.Content>
      </AlertDialog.Portal>
    </AlertDialog.Root>
  );
}
