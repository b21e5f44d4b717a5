import type { Metadata } from 'next';
import { OrchestrationNotFound } from '@/components/orchestrations/orchestration-not-found';

export const metadata: Metadata = { title: 'Not found' };

/** What notFound() renders for an orchestration id no checkpoint has (HTTP 404). */
export default function NotFound() {
  return <OrchestrationNotFound />;
}
