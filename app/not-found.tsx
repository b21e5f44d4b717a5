import type { Metadata } from 'next';
import { NotFoundNotice } from '@/components/shell/not-found-notice';

export const metadata: Metadata = { title: 'Not found' };

/** An address no route matches (HTTP 404): the same notice as inside the console, with a way back to it. */
export default function NotFound() {
  return (
    <main className="p-6">
      <NotFoundNotice />
    </main>
  );
}
