'use client';

import { formatCappedCount } from '@/lib/domain/capped-count';
import type { DeadLetterGroups } from '@/lib/queries/settlements-types';
import { CHIP } from './chip';

/** Dead letters by reason code under the other filters; choosing one filters by it. */
export function DeadLetterGroupsPanel({
  groups,
  selected,
  onSelect,
}: {
  groups: DeadLetterGroups | undefined;
  selected: string | undefined;
  onSelect: (reason: string | null) => void;
}) {
  return (
    <section
      aria-labelledby="dead-letter-groups"
      className="rounded-lg border border-zinc-200 bg-white p-3 dark:border-zinc-800 dark:bg-zinc-900"
    >
      <h2 id="dead-letter-groups" className="mb-2 text-sm font-semibold">
        By reason code
      </h2>
      {!groups ? (
        <p className="text-sm text-zinc-600 dark:text-zinc-400">Loading…</p>
      ) : groups.groups.length === 0 ? (
        <p className="text-sm text-zinc-600 dark:text-zinc-400">No dead letters match the other filters.</p>
      ) : (
        <ul className="flex flex-wrap gap-2" data-testid="dead-letter-groups">
          <li>
            <button type="button" className={CHIP} aria-pressed={!selected} onClick={() => onSelect(null)}>
              All reasons
            </button>
          </li>
          {groups.groups.map((g) => (
            <li key={g.reason}>
              <button
                type="button"
                className={CHIP}
                aria-pressed={selected === g.reason}
                data-reason={g.reason}
                onClick={() => onSelect(g.reason)}
              >
                <span className="font-mono text-xs">{g.reason}</span>
                <span className="tabular-nums font-medium" data-testid="group-count">
                  {formatCappedCount(g.count)}
                </span>
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
