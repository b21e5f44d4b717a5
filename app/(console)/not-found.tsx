import type { Metadata } from 'next';
import { NotFoundNotice } from '@/components/shell/not-found-notice';

export const metadata: Metadata = { title: 'Not found' };

/** What notFound() renders inside the console (HTTP 404) where no segment has a notice of its own. */
export default function ConsoleNotFound() {
  return (
    <NotFoundNotice
      what="page"
      why="Nothing in the console has the address you opened."
      lists={[{ href: '/', label: 'Overview' }]}
    />
  );
}
