'use client';

import { useRouter } from 'next/navigation';
import { useEffect, useRef } from 'react';
import type { CappedCount } from '@/lib/domain/capped-count';
import type { QueueState } from '@/lib/queries/settlements-types';

/** The order the queue is opened in when no state is asked for: the first with rows wins. */
const OPENING_ORDER: QueueState[] = ['due', 'retry_scheduled', 'leased'];

/**
 * The settlements page opened without a state shows the first state that has rows
 * (due, then retry scheduled, then leased), or the dead letters when the queue is
 * empty, instead of an empty Due tab. Only once per visit and only when no state was
 * asked for: a tab chosen by hand (state=due included) is kept, rows or not.
 */
export function useOpenOnStateWithRows(
  state: string | null,
  counts: Record<QueueState | 'dead_lettered', CappedCount> | undefined,
  openState: (state: QueueState) => void,
) {
  const router = useRouter();
  const decided = useRef(false);
  useEffect(() => {
    if (decided.current || !counts) return;
    decided.current = true;
    if (state !== null) return;
    const first = OPENING_ORDER.find((s) => counts[s].value > 0);
    if (first === 'due') return;
    if (first) openState(first);
    else if (counts.dead_lettered.value > 0) router.replace(`/settlements/dead-letters${window.location.search}`);
  }, [state, counts, openState, router]);
}
