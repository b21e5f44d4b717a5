import { NotFoundNotice } from '@/components/shell/not-found-notice';

/** A receipt id Keel knows nothing of (HTTP 404). */
export default function ReceiptNotFound() {
  return (
    <NotFoundNotice
      what="receipt"
      why={
        'The receipt in this address is not queued, not dead-lettered, and Keel holds no history for it; ' +
        'receipt ids are matched exactly.'
      }
      lists={[
        { href: '/settlements?state=all', label: 'The settlement queue' },
        { href: '/settlements/dead-letters', label: 'Dead letters' },
      ]}
    />
  );
}
