import 'server-only';
import { is, Placeholder, type SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type { Pool, QueryResult, QueryResultRow } from 'pg';
import type { DbOrTx } from '../../db/client';

const dialect = new PgDialect();

/**
 * A statement whose every value is a `sql.placeholder`, compiled to text once: each call
 * fills the placeholders from `values` and runs it as the named (server-side prepared)
 * statement `name`, so neither Keel nor Postgres builds or parses it again; Postgres may
 * also keep a generic plan.
 */
export function preparedStatement<Row extends QueryResultRow>(
  name: string,
  statement: SQL,
): (db: DbOrTx, values: Record<string, unknown>) => Promise<QueryResult<Row>> {
  const { sql: text, params } = dialect.sqlToQuery(statement);
  const names = params.map((param) => {
    if (!is(param, Placeholder)) throw new Error(`${name}: every value of the statement must be a placeholder`);
    return param.name;
  });
  return (db, values) =>
    executeNamedText<Row>(
      db,
      name,
      text,
      names.map((placeholder) => values[placeholder]),
    );
}

/**
 * Runs a statement written as text with positional parameters ($1, $2, ...) as the named
 * statement `name` on the connection `db` uses. `name` must stand for one statement text.
 * It goes to the driver directly (the pool, or a transaction's client): these are the
 * settlement workers' per-batch statements, and drizzle's execute adds a traced span and a
 * cache lookup around every call for nothing they use. The result's values are read with
 * the driver's own type parsers.
 */
export function executeNamedText<Row extends QueryResultRow>(
  db: DbOrTx,
  name: string,
  text: string,
  params: unknown[],
): Promise<QueryResult<Row>> {
  return driverOf(db).query<Row>({ name, text, values: params });
}

/** The driver `db` runs on: the pool, or in a transaction the client that holds it. */
function driverOf(db: DbOrTx): Pick<Pool, 'query'> {
  const client = (db._.session as unknown as { client?: Pick<Pool, 'query'> }).client;
  if (!client || typeof client.query !== 'function') throw new Error('the database session has no pg client');
  return client;
}

/** A text element that must be escaped inside a quoted array element: a backslash or a double quote. */
const ARRAY_ESCAPE = /[\\"]/;
const ARRAY_ESCAPE_ALL = /[\\"]/g;

/**
 * One array parameter, built an element at a time: the text node-postgres would send for
 * the JavaScript array (every element quoted, NULL unquoted, an element escaped only when
 * it holds a backslash or a quote), or `{}` when every element is null (unnest pads a
 * shorter array with nulls). Numbers must be safe integers, which String() writes as digits.
 */
export class ArrayParam {
  private readonly elements: string[] = [];
  private allNull = true;

  push(element: string | number | null): void {
    if (element === null) {
      this.elements.push('NULL');
      return;
    }
    this.allNull = false;
    if (typeof element === 'number') this.elements.push(String(element));
    else this.elements.push(`"${ARRAY_ESCAPE.test(element) ? element.replace(ARRAY_ESCAPE_ALL, '\\$&') : element}"`);
  }

  text(): string {
    return this.allNull ? '{}' : `{${this.elements.join(',')}}`;
  }
}
