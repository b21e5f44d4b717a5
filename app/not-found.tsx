import type { Metadata } from 'next';
import { NotFoundNotice } from '@/components/shell/not-found-notice';

export const metadata: Metadata = { title: 'Not found' };

/** An address no route matches (HTTP 404): the console's notice, with a way back into it. */
export default function NotFound() {
  return (
    <main className="p-6">
      <NotFoundNotice
        what="page"
        why="Keel has no page at the address you opened."
        lists={[{ href: '/', label: 'Overview' }]}
      />
    </main>
  );
}
