'use client';

import { useQueryClient, type QueryKey } from '@tanstack/react-query';
import { useState, useTransition } from 'react';
import { releaseCalmRows } from '../ui/calm-rows';
import { useToast } from '../ui/toast';

/** What a server action answers (lib/server/action.ts's ActionResult, as the browser sees it). */
export type Result<T> =
  | { ok: true; value: T }
  | { ok: false; code: string; message: string; fieldErrors?: Record<string, string[]> };

export type Refusal = Extract<Result<unknown>, { ok: false }>;

/**
 * Runs a server action with the console's conventions: a pending flag, a toast with
 * the outcome (a refusal names its code) and invalidation of the queries the action
 * changed (keys from lib/query-keys.ts). Pages read through TanStack Query, so no
 * server re-render is needed. `shownInline`: the form shows this refusal beside its
 * field itself, so no toast repeats it (one message, where the fix is made).
 */
export function useServerAction<I, T>(
  run: (input: I) => Promise<Result<T>>,
  options: {
    success: (value: T) => string;
    /** Where the success toast sends the user to see the outcome. */
    link?: (value: T) => { href: string; label: string };
    invalidate?: QueryKey[];
    onSuccess?: (value: T) => void;
    shownInline?: (refusal: Refusal) => boolean;
  },
) {
  const [pending, start] = useTransition();
  const [lastError, setLastError] = useState<Refusal | null>(null);
  const toast = useToast();
  const queryClient = useQueryClient();
  const execute = (input: I) =>
    new Promise<Result<T>>((resolve) =>
      start(async () => {
        let result: Result<T>;
        try {
          result = await run(input);
        } catch {
          result = {
            ok: false,
            code: 'NETWORK',
            message: 'The server could not be reached; nothing was changed by this page.',
          };
        }
        // What follows the reader's own action is shown at once, even in a list they are reading.
        releaseCalmRows();
        if (result.ok) {
          setLastError(null);
          toast({ tone: 'success', title: options.success(result.value), link: options.link?.(result.value) });
          await Promise.all((options.invalidate ?? []).map((queryKey) => queryClient.invalidateQueries({ queryKey })));
          options.onSuccess?.(result.value);
        } else {
          setLastError(result);
          if (!options.shownInline?.(result))
            toast({ tone: 'error', title: `Refused: ${result.code}`, detail: result.message });
        }
        resolve(result);
      }),
    );
  return { execute, pending, lastError };
}
