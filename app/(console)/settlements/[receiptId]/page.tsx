import type { Metadata } from 'next';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { ReceiptHistoryView } from '@/components/settlements/receipt-history-view';
import { PageHeader } from '@/components/ui/page-header';
import { can } from '@/lib/auth/roles';
import { readReceiptHistory } from '@/lib/queries/settlements';
import { runtime } from '@/lib/server/runtime';
import { requireActor } from '@/lib/server/session';

type Props = { params: Promise<{ receiptId: string }> };

/**
 * A page's dynamic segment arrives still percent-encoded (a route handler's arrives
 * decoded), and receipt ids are free text, so it is decoded exactly once here.
 */
async function receiptIdOf(params: Props['params']): Promise<string | null> {
  try {
    const receiptId = decodeURIComponent((await params).receiptId);
    return receiptId.length > 0 && receiptId.length <= 1_000 ? receiptId : null;
  } catch {
    return null;
  }
}

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  return { title: `Receipt ${(await receiptIdOf(params)) ?? ''}` };
}

export default async function ReceiptHistoryPage({ params }: Props) {
  const receiptId = await receiptIdOf(params);
  if (receiptId === null) notFound();
  const actor = await requireActor();
  const history = await readReceiptHistory(runtime().db, receiptId);
  if (!history) notFound();
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
      <PageHeader title={`Receipt ${receiptId}`} description="Its attempts, reasons, claims and replays, and every action taken on it, newest first." />
      <ReceiptHistoryView initial={history} canAct={can(actor.role, 'replaySettlement')} />
    </>
  );
}
