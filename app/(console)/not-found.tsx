import type { Metadata } from 'next';
import { NotFoundNotice } from '@/components/shell/not-found-notice';

export const metadata: Metadata = { title: 'Not found' };

/** What notFound() renders inside the console (HTTP 404): a detail page whose id names nothing. */
export default function ConsoleNotFound() {
  return <NotFoundNotice />;
}
