import 'server-only';
import { singleton } from '../observability/singletons';

/**
 * How long a count past the cap is remembered: as long as a live change takes to reach an
 * open tab (docs/performance.md#capped-counts-remembered).
 */
export const CAPPED_COUNT_MEMORY_MS = 2_000;

/** Filters remembered at most; the oldest is forgotten first. */
const MAX_ENTRIES = 500;

/**
 * Counts that passed their cap, per filter, for CAPPED_COUNT_MEMORY_MS. Such a count shows
 * as "10,000+" whatever it is, and costs a cap's worth of index entries to count again:
 * ten people on one broad view, or one view refetched by its live updates, would count the
 * same 10,001 entries each time. A count below the cap is never remembered, so it follows
 * every change; every action this process runs forgets them all, so a person's own change
 * shows at once.
 */
export class CappedCountMemory<T> {
  private entries = new Map<string, { value: T; untilMs: number }>();
  private forgotten = 0;

  /** The clock, in milliseconds: monotonic; a test may stop it. */
  constructor(public now: () => number = () => performance.now()) {}

  recall(key: string): T | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.untilMs > this.now()) return entry.value;
    this.entries.delete(key);
    return undefined;
  }

  /** Taken before counting, for `remember`: when the count began. */
  mark(): CountMark {
    return { atMs: this.now(), forgotten: this.forgotten };
  }

  /**
   * Keeps `value`, counted from `mark`, for CAPPED_COUNT_MEMORY_MS from that mark. A count
   * begun before the last forgetAll is not kept: it may not hold the change that forgot.
   */
  remember(key: string, value: T, mark: CountMark): void {
    if (mark.forgotten !== this.forgotten) return;
    this.entries.delete(key);
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, { value, untilMs: mark.atMs + CAPPED_COUNT_MEMORY_MS });
  }

  forgetAll(): void {
    this.entries.clear();
    this.forgotten += 1;
  }
}

export interface CountMark {
  readonly atMs: number;
  readonly forgotten: number;
}

/** The process's memory (one per process however many bundles load this module). */
export const cappedCountMemory = (): CappedCountMemory<unknown> =>
  singleton('capped-count-memory', () => new CappedCountMemory<unknown>());

/**
 * A filter's key for the memory: its scope (the list and the count's part) and its fields,
 * sorted, without those left unset. The clock is no field of it: the same filter read a
 * second later is the same key.
 */
export function filterKey(scope: string, filter: object): string {
  const fields = Object.entries(filter)
    .filter(([, value]) => value !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `${scope}:${JSON.stringify(fields)}`;
}
