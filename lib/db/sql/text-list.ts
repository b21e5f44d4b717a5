import { sql, type SQL } from 'drizzle-orm';

/**
 * A SQL `'A', 'B'` list from a closed vocabulary of lib/domain (constants only, never
 * input), for `IN (...)`: the statement text stays constant, as the schema's CHECKs and
 * the partial indexes' predicates are.
 */
export const textList = (values: readonly string[]): SQL => {
  for (const value of values) if (!/^[A-Za-z0-9_]+$/.test(value)) throw new Error(`not a vocabulary word: ${value}`);
  return sql.raw(values.map((value) => `'${value}'`).join(', '));
};
