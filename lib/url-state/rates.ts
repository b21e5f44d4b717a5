import { createLoader, parseAsStringLiteral } from 'nuqs/server';
import { RATE_RANGES, type RateRange } from '../domain/rates';
import { type FilterWords, oneOf } from './filter-words';

/** The /rates page's URL state (ratesQuerySchema validates the same param). */
export const ratesSearch = {
  range: parseAsStringLiteral(RATE_RANGES).withDefault('1h'),
};
export const loadRatesSearch = createLoader(ratesSearch);

export const RATE_FILTER_WORDS: FilterWords = {
  range: { label: 'Range', expect: oneOf([...RATE_RANGES]) },
};

/** The page of each range, made on the server: three fixed links need no serializer in the browser. */
export const rateRangeHrefs = (): Record<RateRange, string> =>
  Object.fromEntries(RATE_RANGES.map((r) => [r, r === '1h' ? '/rates' : `/rates?range=${r}`])) as Record<
    RateRange,
    string
  >;
