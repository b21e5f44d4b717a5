import type { Metadata } from 'next';
import { notFound } from 'next/navigation';
import { Prefetched } from '@/components/data/prefetched';
import { OrchestrationView } from '@/components/orchestrations/orchestration-view';
import { decodePathSegment } from '@/lib/domain/path-segment';
import { orchestrationPathSchema } from '@/lib/queries/orchestration-detail';
import { readForPage } from '@/lib/reads/define-read';
import { orchestrationDetail } from '@/lib/reads/recovery';
import { page } from '@/lib/server/page';

type Props = { params: Promise<{ id: string }> };

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  // A page's dynamic segment arrives still percent-encoded; page() decodes it the same way.
  const id = decodePathSegment((await params).id);
  return { title: `Orchestration ${id.ok ? id.value : ''}` };
}

export default page('read', { params: orchestrationPathSchema }, async function OrchestrationPage({ actor, params }) {
  const detail = await readForPage(orchestrationDetail, actor, { id: params.id });
  if (!detail.ok || !(await detail.value())) notFound();
  return (
    <Prefetched queries={[detail.prefetch]}>
      <OrchestrationView executionId={params.id} />
    </Prefetched>
  );
});
