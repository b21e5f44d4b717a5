import type { Metadata } from 'next';
import { notFound } from 'next/navigation';
import { Prefetched } from '@/components/data/prefetched';
import { ExecutionView } from '@/components/executions/execution-view';
import { idPathSchema } from '@/lib/domain/path-segment';
import { readForPage } from '@/lib/reads/define-read';
import { executionDetail } from '@/lib/reads/executions';
import { page } from '@/lib/server/page';
import { runtime } from '@/lib/server/composition-root';
import { deepLinksFor } from '@/lib/domain/deep-links';

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  return { title: `Execution ${(await params).id}` };
}

export default page('read', { params: idPathSchema }, async function ExecutionPage({ actor, params }) {
  const detail = await readForPage(executionDetail, actor, { id: params.id });
  if (!detail.ok || !(await detail.value())) notFound();
  return (
    <Prefetched queries={[detail.prefetch]}>
      <ExecutionView
        id={params.id}
        role={actor.role}
        links={deepLinksFor(runtime().settings.deepLinks, 'execution', String(params.id))}
      />
    </Prefetched>
  );
});
