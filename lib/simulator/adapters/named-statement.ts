import 'server-only';
import type { SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type { QueryResult, QueryResultRow } from 'pg';
import type { DbOrTx } from '../../db/client';

const dialect = new PgDialect();

/**
 * Runs `statement` as a named (server-side prepared) statement on the connection `db`
 * uses: Postgres parses it once per connection and may keep a generic plan, instead of
 * parsing and planning it on every call. `name` must stand for one statement text: every
 * value of `statement` is a parameter, so a statement built from the same parts has the
 * same text whatever its values.
 */
export function executeNamed<Row extends QueryResultRow>(
  db: DbOrTx,
  name: string,
  statement: SQL,
): Promise<QueryResult<Row>> {
  const query = dialect.sqlToQuery(statement);
  return executeNamedText<Row>(db, name, query.sql, query.params);
}

/** executeNamed for a statement written as text with positional parameters ($1, $2, ...). */
export function executeNamedText<Row extends QueryResultRow>(
  db: DbOrTx,
  name: string,
  text: string,
  params: unknown[],
): Promise<QueryResult<Row>> {
  return db._.session.prepareQuery({ sql: text, params }, undefined, name, false).execute() as Promise<
    QueryResult<Row>
  >;
}
