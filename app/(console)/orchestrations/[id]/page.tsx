import type { Metadata } from 'next';
import { notFound } from 'next/navigation';
import { Prefetched } from '@/components/data/prefetched';
import { OrchestrationView } from '@/components/orchestrations/orchestration-view';
import { decodePathSegment } from '@/lib/domain/path-segment';
import { orchestrationPathSchema, readOrchestrationDetail } from '@/lib/queries/orchestration-detail';
import { queryKeys } from '@/lib/query-keys';
import { primaryDb } from '@/lib/server/console-reads';
import { page } from '@/lib/server/page';
import { runtime } from '@/lib/server/composition-root';

type Props = { params: Promise<{ id: string }> };

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  // A page's dynamic segment arrives still percent-encoded; page() decodes it the same way.
  const id = decodePathSegment((await params).id);
  return { title: `Orchestration ${id.ok ? id.value : ''}` };
}

export default page('read', { params: orchestrationPathSchema }, async function OrchestrationPage({ params }) {
  const detail = await readOrchestrationDetail(primaryDb(), runtime().settings.checkpointKey, params.id);
  if (!detail) notFound();
  return (
    <Prefetched queries={[{ queryKey: queryKeys.orchestrations.detail(params.id), queryFn: async () => detail }]}>
      <OrchestrationView executionId={params.id} />
    </Prefetched>
  );
});
