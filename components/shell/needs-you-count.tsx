'use client';

import { useQuery } from '@tanstack/react-query';
import { needsYouQuery } from '@/lib/reads/queries';
import { SEVERITY_BADGE } from '../ui/severity';

/** Beside Overview in the navigation: how many things wait on the reader (docs/console.md#needs-you). */
export function NeedsYouCount() {
  const view = useQuery(needsYouQuery.options()).data;
  if (!view || view.count === 0) return null;
  return (
    <span
      data-testid="needs-you-count"
      data-count={view.count}
      className={
        `ml-auto rounded-full px-2 py-0.5 text-xs font-semibold tabular-nums ` +
        `${SEVERITY_BADGE[view.severity ?? 'warning']}`
      }
    >
      {view.count.toLocaleString('en-US')}
      <span className="sr-only"> {view.count === 1 ? 'thing needs' : 'things need'} you</span>
    </span>
  );
}
