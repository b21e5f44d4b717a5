import type { Metadata } from 'next';
import { Prefetched } from '@/components/data/prefetched';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { ReceiptHistoryView } from '@/components/settlements/receipt-history-view';
import { PageHeader } from '@/components/ui/page-header';
import { can } from '@/lib/domain/roles';
import { readForPage } from '@/lib/reads/define-read';
import { receiptHistory } from '@/lib/reads/settlements';
import { decodePathSegment, receiptPathSchema } from '@/lib/domain/path-segment';
import { page } from '@/lib/server/page';
import { runtime } from '@/lib/server/composition-root';
import { deepLinksFor } from '@/lib/domain/deep-links';

type Props = { params: Promise<{ receiptId: string }> };

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  // A page's dynamic segment arrives still percent-encoded; page() decodes it the same way.
  const receiptId = decodePathSegment((await params).receiptId);
  return { title: `Receipt ${receiptId.ok ? receiptId.value : ''}` };
}

export default page(
  'read',
  { params: receiptPathSchema },
  async function ReceiptHistoryPage({ actor, params: { receiptId } }) {
    const history = await readForPage(receiptHistory, actor, { receiptId });
    if (!history.ok || !(await history.value())) notFound();
    return (
      <>
        <p className="mb-2 text-sm">
          <Link href="/settlements" className="text-sky-800 underline dark:text-sky-300">
            Settlements
          </Link>
          {' · '}
          <Link href="/settlements/dead-letters" className="text-sky-800 underline dark:text-sky-300">
            Dead letters
          </Link>
        </p>
        <PageHeader
          title={`Receipt ${receiptId}`}
          description="Its attempts, reasons, claims and replays, and every action taken on it, newest first."
        />
        <Prefetched queries={[history.prefetch]}>
          <ReceiptHistoryView
            receiptId={receiptId}
            canAct={can(actor.role, 'replaySettlement')}
            links={deepLinksFor(runtime().settings.deepLinks, 'receipt', receiptId)}
          />
        </Prefetched>
      </>
    );
  },
);
