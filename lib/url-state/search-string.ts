/** A value a filter may hold before it becomes URL text. */
export type SearchValue = string | number | boolean | Date | null | undefined;

/**
 * Filters as query parameters: empty values left out (an emptied field means "any"), dates as
 * UTC ISO text, in name order. A read's query key, its API URL and every link of the console are
 * made from this one function, so a page's prefetched key and the view's key cannot drift apart.
 */
export function searchParamsOf(values: Readonly<Record<string, SearchValue>>): Record<string, string> {
  const params: Record<string, string> = {};
  for (const name of Object.keys(values).sort()) {
    const value = values[name];
    if (value === undefined || value === null || value === '' || value === false) continue;
    if (value instanceof Date) {
      if (!Number.isNaN(value.getTime())) params[name] = value.toISOString();
    } else params[name] = String(value);
  }
  return params;
}

/** `path?a=1&b=2` (or `path` alone) for the filters, the console's one URL serializer. */
export function withSearch(path: string, values: Readonly<Record<string, SearchValue>> = {}): string {
  const text = new URLSearchParams(searchParamsOf(values)).toString();
  return text ? `${path}?${text}` : path;
}
