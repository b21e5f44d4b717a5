import { createLoader, createSerializer, parseAsString } from 'nuqs/server';

/** The search results page's URL state: the text searched for (searchQuerySchema validates it). */
export const searchUrlState = { q: parseAsString };
export const loadSearchState = createLoader(searchUrlState);
export const serializeSearch = createSerializer(searchUrlState);

/** `/search?q=…`, the results page, or `/api/search?q=…`, its data. */
export const searchPageHref = (q: string) => serializeSearch('/search', { q });
export const searchApiHref = (q: string) => serializeSearch('/api/search', { q });
