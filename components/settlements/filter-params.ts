import type { FILTER_KEYS } from '@/lib/queries/settlements-filter-types';

export type FilterKey = (typeof FILTER_KEYS)[number];
export type FilterValues = Partial<Record<FilterKey, string>>;

/**
 * The non-empty filters plus extras (state, cursor) as query parameters in a stable
 * order: the query key, the read API URL and the server's first render all use it, so
 * the page's prefetched data is recognised as the view's. The values come from the
 * typed parsers of lib/url-state/settlements.ts, on the server and in the browser.
 */
export function filterParams(
  values: Record<string, string | null | undefined>,
  extra: Record<string, string | null | undefined> = {},
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries({ ...values, ...extra }).sort(([a], [b]) => a.localeCompare(b)))
    if (value) out[key] = value;
  return out;
}
