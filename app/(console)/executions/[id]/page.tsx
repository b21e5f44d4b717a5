import type { Metadata } from 'next';
import { notFound } from 'next/navigation';
import { Prefetched } from '@/components/data/prefetched';
import { ExecutionView } from '@/components/executions/execution-view';
import { idPathSchema } from '@/lib/domain/path-segment';
import { queryKeys } from '@/lib/query-keys';
import { executionDetailPage } from '@/lib/server/console-reads';
import { page } from '@/lib/server/page';
import { runtime } from '@/lib/server/composition-root';
import { deepLinksFor } from '@/lib/domain/deep-links';

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  return { title: `Execution ${(await params).id}` };
}

export default page('read', { params: idPathSchema }, async function ExecutionPage({ actor, params }) {
  const detail = await executionDetailPage(params.id, actor.role);
  if (!detail) notFound();
  return (
    <Prefetched queries={[{ queryKey: queryKeys.executions.detail(params.id), queryFn: async () => detail }]}>
      <ExecutionView
        id={params.id}
        role={actor.role}
        links={deepLinksFor(runtime().settings.deepLinks, 'execution', String(params.id))}
      />
    </Prefetched>
  );
});
