import { FILTER_KEYS } from '@/lib/queries/settlements-types';

export type FilterKey = (typeof FILTER_KEYS)[number];
export type FilterValues = Partial<Record<FilterKey, string>>;

/**
 * The non-empty filters plus extras (state, cursor) as query parameters in a stable
 * order: the query key, the read API URL and the server's first render all use it, so
 * the page's prefetched data is recognised as the view's.
 */
export function filterParams(values: Record<string, string | null | undefined>, extra: Record<string, string | null | undefined> = {}): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries({ ...values, ...extra }).sort(([a], [b]) => a.localeCompare(b))) if (value) out[key] = value;
  return out;
}

/** The filter fields of a page's search parameters (first value of each). */
export function filterValuesOf(search: Record<string, string | string[] | undefined>): FilterValues {
  const values: FilterValues = {};
  for (const key of FILTER_KEYS) {
    const raw = search[key];
    const value = Array.isArray(raw) ? raw[0] : raw;
    if (value) values[key] = value;
  }
  return values;
}

export const firstValue = (raw: string | string[] | undefined): string | undefined => (Array.isArray(raw) ? raw[0] : raw) || undefined;
