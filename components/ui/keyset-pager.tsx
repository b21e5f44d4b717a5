'use client';

import { Button } from './button';

/** First / next page over a keyset cursor: lists never page by offset, so there is no page number. */
export function KeysetPager({
  label,
  cursor,
  nextCursor,
  onChange,
}: {
  label: string;
  cursor: string | null;
  nextCursor: string | null | undefined;
  onChange: (cursor: string | null) => void;
}) {
  return (
    <nav aria-label={label} className="flex gap-2">
      <Button disabled={!cursor} onClick={() => onChange(null)}>
        First page
      </Button>
      <Button disabled={!nextCursor} onClick={() => onChange(nextCursor ?? null)}>
        Next page
      </Button>
    </nav>
  );
}
