'use client';

import { retryWebhookAction } from '@/app/actions/webhooks';
import { Button } from '../ui/button';
import { attemptText, useWebhookAction } from './use-webhook-action';

/** Sends a pending or failed delivery now; the server refuses one a worker is sending at this moment. */
export function RetryDeliveryButton({ deliveryId, sending }: { deliveryId: number; sending: boolean }) {
  const retry = useWebhookAction<{ deliveryId: number }>(retryWebhookAction, (o) =>
    o.repeated
      ? `Delivery #${o.deliveryId} was retried already (${o.status})`
      : `Delivery #${o.deliveryId}: ${attemptText(o)}`,
  );
  return (
    <Button
      className="px-2 py-0.5 text-xs"
      disabled={retry.pending || sending}
      title={sending ? 'Being sent right now' : undefined}
      aria-label={`Retry delivery ${deliveryId} now`}
      onClick={() => void retry.execute({ deliveryId })}
    >
      {retry.pending ? 'Sending…' : 'Retry now'}
    </Button>
  );
}
