'use client';

import { useState } from 'react';
import type { WebhookActionOutcome } from '@/app/actions/webhooks';
import { queryKeys } from '@/lib/query-keys';
import { useServerAction, type Result } from '../actions/use-server-action';
import { newOperationId } from '../users/operation-id';

/**
 * A Webhooks page button's action: one operation id until the server answers, so a
 * double click (two calls before the button disables) sends once, then a fresh one for
 * the next deliberate press.
 */
export function useWebhookAction<I>(
  run: (input: I & { operationId: string }) => Promise<Result<WebhookActionOutcome>>,
  success: (outcome: WebhookActionOutcome) => string,
) {
  const [operationId, setOperationId] = useState(newOperationId);
  const action = useServerAction(run, { success, invalidate: [queryKeys.webhooks.all, queryKeys.audit.all] });
  return {
    pending: action.pending,
    execute: async (input: I) => {
      const result = await action.execute({ ...input, operationId });
      setOperationId(newOperationId());
      return result;
    },
  };
}

/** How an attempt ended, in a few words for a toast. */
export const attemptText = (o: WebhookActionOutcome): string =>
  o.status === 'DELIVERED'
    ? `delivered, HTTP ${o.httpStatus}`
    : `not accepted (${o.error ?? 'no answer'}); ` +
      `${o.status === 'FAILED' ? 'given up as FAILED' : 'retried with backoff'}`;
