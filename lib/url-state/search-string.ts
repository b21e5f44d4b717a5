/** A value a filter may hold before it becomes URL text. */
export type SearchValue = string | number | boolean | Date | null | undefined;

/**
 * Filters as query parameters: empty values left out (an emptied field means "any") and dates as
 * UTC ISO text, in the order given. A read's query key, its API URL and every link of the console
 * are made from this one function, so a page's prefetched key and the view's key cannot drift
 * apart (TanStack Query hashes a key's objects with their names sorted, so the order is free).
 */
export function searchParamsOf(values: Readonly<Record<string, SearchValue>>): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined || value === null || value === '' || value === false) continue;
    if (value instanceof Date) {
      if (!Number.isNaN(value.getTime())) params[name] = value.toISOString();
    } else params[name] = String(value);
  }
  return params;
}

// As nuqs writes the URLs of the filters the user changes: the characters that would end or split a
// value are escaped, and the rest (`:` of a time, `/` of an id) stays readable. URLSearchParams, on
// both sides, reads it back as it was.
const encodeValue = (value: string) =>
  value
    .replace(/%/g, '%25')
    .replace(/\+/g, '%2B')
    .replace(/ /g, '+')
    .replace(/#/g, '%23')
    .replace(/&/g, '%26')
    .replace(/"/g, '%22')
    .replace(/'/g, '%27')
    .replace(/`/g, '%60')
    .replace(/</g, '%3C')
    .replace(/>/g, '%3E')
    .replace(/[\x00-\x1F]/g, (char) => encodeURIComponent(char));

/** `path?a=1&b=2` (or `path` alone) for the filters: the console's one URL serializer. */
export function withSearch(path: string, values: Readonly<Record<string, SearchValue>> = {}): string {
  const pairs = Object.entries(searchParamsOf(values)).map(
    ([name, value]) => `${encodeURIComponent(name)}=${encodeValue(value)}`,
  );
  return pairs.length > 0 ? `${path}?${pairs.join('&')}` : path;
}
