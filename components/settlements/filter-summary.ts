import type { DeadLetterFilter } from '@/lib/domain/dead-letter-filter-words';

const UNITS: [number, string][] = [
  [86_400_000, 'd'],
  [3_600_000, 'h'],
  [60_000, 'min'],
  [1_000, 's'],
];

/** A duration in its largest whole unit, such as `2d` or `90min`. */
export function formatDuration(ms: number): string {
  for (const [size, unit] of UNITS) if (ms >= size && ms % size === 0) return `${ms / size} ${unit}`;
  return `${ms} ms`;
}

/** A dead-letter filter in words, for a confirmation that says exactly what it selects. */
export function describeDeadLetterFilter(filter: DeadLetterFilter): string {
  if (filter.receiptIds)
    return (
      `the ${filter.receiptIds.length.toLocaleString('en-US')} ` +
      `selected dead letter${filter.receiptIds.length === 1 ? '' : 's'}`
    );
  const parts: string[] = [];
  if (filter.reason) parts.push(`reason ${filter.reason}`);
  if (filter.receiptIdPrefix) parts.push(`receipt id starting with “${filter.receiptIdPrefix}”`);
  if (filter.minAttempts !== undefined && filter.maxAttempts !== undefined)
    parts.push(`${filter.minAttempts} to ${filter.maxAttempts} attempts`);
  else if (filter.minAttempts !== undefined) parts.push(`at least ${filter.minAttempts} attempts`);
  else if (filter.maxAttempts !== undefined) parts.push(`at most ${filter.maxAttempts} attempts`);
  if (filter.minAgeMs !== undefined) parts.push(`recorded at least ${formatDuration(filter.minAgeMs)} ago`);
  if (filter.maxAgeMs !== undefined) parts.push(`recorded at most ${formatDuration(filter.maxAgeMs)} ago`);
  return parts.length ? `dead letters with ${parts.join(', ')}` : 'every dead letter';
}
