'use client';

import { sendTestWebhookAction } from '@/app/actions/webhooks';
import { Button } from '../ui/button';
import { attemptText, useWebhookAction } from './use-webhook-action';

/** Sends a `webhook.test` event to one endpoint now, signed and formatted as its real events are. */
export function SendTestButton({ endpoint }: { endpoint: string }) {
  const send = useWebhookAction<{ endpoint: string }>(sendTestWebhookAction, (o) =>
    o.repeated
      ? `This test was sent already (delivery #${o.deliveryId}, ${o.status})`
      : `Test to ${o.endpoint}: ${attemptText(o)}`,
  );
  return (
    <Button
      className="ml-2 px-2 py-0.5 text-xs"
      disabled={send.pending}
      aria-label={`Send test to ${endpoint}`}
      onClick={() => void send.execute({ endpoint })}
    >
      {send.pending ? 'Sending…' : 'Send test'}
    </Button>
  );
}
