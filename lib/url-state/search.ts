import { createLoader, parseAsString } from 'nuqs/server';
import { withSearch } from './search-string';

/** The search results page's URL state: the text searched for (the search read's schema validates it). */
export const searchUrlState = { q: parseAsString };
export const loadSearchState = createLoader(searchUrlState);

/** `/search?q=…`, the results page. */
export const searchPageHref = (q: string) => withSearch('/search', { q });
