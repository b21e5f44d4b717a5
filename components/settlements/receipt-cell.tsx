import Link from 'next/link';
import { Cell } from '../ui/table';
import { LINK, receiptHref } from './links';

/**
 * A settlement row's first cell: its tick box for a bulk action (none when `selected` is null;
 * `locked` while the whole filter is selected), then the link to the receipt's page.
 */
export function ReceiptCell({
  receiptId,
  selected,
  locked,
  onSelect,
}: {
  receiptId: string;
  selected: boolean | null;
  locked?: boolean;
  onSelect: (on: boolean) => void;
}) {
  return (
    <Cell mono>
      {selected !== null ? (
        <input
          type="checkbox"
          aria-label={`Select ${receiptId}`}
          checked={selected}
          disabled={locked}
          onChange={(e) => onSelect(e.target.checked)}
          className="mr-2 align-middle"
        />
      ) : null}
      <Link href={receiptHref(receiptId)} prefetch={false} className={LINK}>
        {receiptId}
      </Link>
    </Cell>
  );
}
