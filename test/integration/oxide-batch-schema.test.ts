import { is, SQL, sql } from 'drizzle-orm';
import { getTableConfig, type IndexedColumn, PgDialect, PgTable, type PgColumn } from 'drizzle-orm/pg-core';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import * as oxideBatchSchema from '../../lib/db/schema/oxide-batch';
import { RUNTIME_INDEXES } from '../../lib/db/runtime-indexes';
import { freshDatabase } from '../support/database';

/*
 * The runtime-owned oxide_batch schema is written twice: lib/db/bootstrap/oxide-batch.sql
 * is what the migrator runs (the runtime's truth) and lib/db/schema/oxide-batch.ts is the
 * Drizzle mirror Keel's queries are typed by. This test holds the two together by reading
 * the migrated catalog. Expressions are never compared as we spell them: Postgres
 * normalizes both sides (CHECKs and indexes are rebuilt on a scratch copy of the table,
 * defaults are evaluated), so `IN (...)` against `= ANY (ARRAY[...])` is no mismatch.
 */

type TableConfig = ReturnType<typeof getTableConfig>;

// Every table the Drizzle file exports, so a table added there is compared without editing this test.
const drizzleTables = Object.values(oxideBatchSchema as Record<string, unknown>).filter((value): value is PgTable =>
  is(value, PgTable),
);
const dialect = new PgDialect();

/**
 * Drizzle SQL as the text drizzle-kit would emit: bare column names ('indexes' mode), so it
 * also applies to the scratch copy, and any bound value inlined as a literal.
 */
function render(value: SQL): string {
  return dialect.sqlToQuery(sql`${value}`.inlineParams(), 'indexes').sql;
}

/**
 * One statement under a savepoint: a statement Postgres rejects becomes a reported problem, not an aborted transaction.
 */
async function attempt<R extends pg.QueryResultRow>(
  client: pg.PoolClient,
  text: string,
  params: unknown[] = [],
): Promise<{ rows: R[]; error?: undefined } | { error: string }> {
  await client.query('savepoint schema_probe');
  try {
    const { rows } = await client.query<R>(text, params);
    await client.query('release savepoint schema_probe');
    return { rows };
  } catch (error) {
    await client.query('rollback to savepoint schema_probe');
    return { error: (error as Error).message };
  }
}

async function compareColumns(client: pg.PoolClient, config: TableConfig): Promise<string[]> {
  const problems: string[] = [];
  const at = (column: string) => `${config.name}.${column}`;
  const { rows } = await client.query<{
    name: string;
    type: string;
    notNull: boolean;
    default: string | null;
    identity: string;
  }>(
    `select a.attname as name, format_type(a.atttypid, a.atttypmod) as type, a.attnotnull as "notNull",
            pg_get_expr(d.adbin, d.adrelid) as default, a.attidentity as identity
       from pg_attribute a left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
      where a.attrelid = $1::regclass and a.attnum > 0 and not a.attisdropped`,
    [`oxide_batch.${config.name}`],
  );
  const dbColumns = new Map(rows.map((row) => [row.name, row]));
  for (const name of dbColumns.keys()) {
    if (!config.columns.some((column) => column.name === name))
      problems.push(`${at(name)}: column in the database, not in the Drizzle file`);
  }

  // Postgres spells types its own way (varchar(16) is character varying(16)): a scratch table
  // of the Drizzle types reads them back in that spelling.
  const typeProbe = `drizzle_types_${config.name}`;
  const declared = config.columns.map((column) => `"${column.name}" ${column.getSQLType()}`).join(', ');
  const created = await attempt(client, `create temp table "${typeProbe}" (${declared})`);
  const drizzleTypes = new Map<string, string>();
  if (created.error !== undefined) {
    problems.push(`${config.name}: Postgres rejects the Drizzle column types: ${created.error}`);
  } else {
    const probed = await client.query<{ name: string; type: string }>(
      `select attname as name, format_type(atttypid, atttypmod) as type from pg_attribute where attrelid = $1::regclass
       and attnum > 0`,
      [`pg_temp."${typeProbe}"`],
    );
    for (const row of probed.rows) drizzleTypes.set(row.name, row.type);
  }

  for (const column of config.columns) {
    const db = dbColumns.get(column.name);
    if (!db) {
      problems.push(`${at(column.name)}: column missing in the database`);
      continue;
    }
    const type = drizzleTypes.get(column.name);
    if (type !== undefined && type !== db.type)
      problems.push(`${at(column.name)}: type db ${db.type}, drizzle ${type}`);
    if (column.notNull !== db.notNull)
      problems.push(`${at(column.name)}: not null db ${db.notNull}, drizzle ${column.notNull}`);
    const identity = column.generatedIdentity ? (column.generatedIdentity.type === 'always' ? 'a' : 'd') : '';
    if (identity !== db.identity)
      problems.push(`${at(column.name)}: identity db '${db.identity}', drizzle '${identity}'`);
    problems.push(...(await compareDefault(client, column, db, at(column.name))));
  }
  return problems;
}

async function compareDefault(
  client: pg.PoolClient,
  column: PgColumn,
  db: { type: string; default: string | null },
  label: string,
): Promise<string[]> {
  // $defaultFn is applied by Drizzle in JS and has no database default; only .default() does.
  const drizzleDefault =
    column.default === undefined
      ? null
      : render(is(column.default, SQL) ? column.default : sql`${sql.param(column.default, column)}`);
  if (drizzleDefault === null && db.default === null) return [];
  const mismatch = `${label}: default db ${db.default ?? 'none'}, drizzle ${drizzleDefault ?? 'none'}`;
  if (drizzleDefault === null || db.default === null) return [mismatch];
  // Evaluated rather than read: 'x' and 'x'::character varying are one default. now() is the
  // transaction's instant, so it equals itself; a random default would need a textual check.
  const same = await attempt<{ same: boolean }>(
    client,
    `select (${drizzleDefault})::${db.type} is not distinct from (${db.default})::${db.type} as same`,
  );
  if (same.error !== undefined) return [`${mismatch} (${same.error})`];
  return same.rows[0]?.same ? [] : [mismatch];
}

/** `LIKE` copies columns, types and nullability but no constraint or index, so only Drizzle's are added to it. */
async function scratchCopy(client: pg.PoolClient, config: TableConfig): Promise<string> {
  const copy = `db_copy_${config.name}`;
  await client.query(`create temp table "${copy}" (like oxide_batch."${config.name}")`);
  return `pg_temp."${copy}"`;
}

const referentialAction = (verb: string, action: string | undefined) =>
  action && action !== 'no action' ? ` ON ${verb} ${action.toUpperCase()}` : '';

async function compareConstraints(client: pg.PoolClient, config: TableConfig, copy: string): Promise<string[]> {
  const problems: string[] = [];
  const expected = new Map<string, string>(); // name -> definition as pg_get_constraintdef prints it
  const declared = new Set<string>();

  const primaryKey = [
    ...config.columns.filter((column) => column.primary),
    ...config.primaryKeys.flatMap((key) => key.columns),
  ];
  if (primaryKey.length > 0) {
    expected.set(
      config.primaryKeys[0]?.getName() ?? `${config.name}_pkey`,
      `PRIMARY KEY (${primaryKey.map((c) => c.name).join(', ')})`,
    );
  }
  for (const unique of config.uniqueConstraints) {
    const nulls = unique.nullsNotDistinct ? 'NULLS NOT DISTINCT ' : '';
    expected.set(unique.getName() ?? '', `UNIQUE ${nulls}(${unique.columns.map((c) => c.name).join(', ')})`);
  }
  for (const column of config.columns.filter((c) => c.isUnique)) {
    const nulls = column.uniqueType === 'not distinct' ? 'NULLS NOT DISTINCT ' : '';
    expected.set(column.uniqueName ?? '', `UNIQUE ${nulls}(${column.name})`);
  }
  for (const foreignKey of config.foreignKeys) {
    const reference = foreignKey.reference();
    const target = getTableConfig(reference.foreignTable);
    expected.set(
      foreignKey.getName(),
      `FOREIGN KEY (${reference.columns.map((c) => c.name).join(', ')}) ` +
        `REFERENCES ${target.schema ?? 'public'}.${target.name}` +
        `(${reference.foreignColumns.map((c) => c.name).join(', ')})` +
        referentialAction('UPDATE', foreignKey.onUpdate) +
        referentialAction('DELETE', foreignKey.onDelete),
    );
  }
  for (const name of expected.keys()) declared.add(name);

  // A CHECK is compared by meaning: the Drizzle expression goes onto the scratch copy and
  // Postgres prints both in its normal form (casts, parentheses, IN as = ANY).
  for (const check of config.checks) {
    declared.add(check.name);
    const added = await attempt(
      client,
      `alter table ${copy} add constraint "${check.name}" check (${render(check.value)})`,
    );
    if (added.error !== undefined)
      problems.push(`${config.name}: Postgres rejects Drizzle check ${check.name}: ${added.error}`);
  }
  const normalized = await client.query<{ name: string; definition: string }>(
    `select conname as name, pg_get_constraintdef(oid) as definition from pg_constraint where conrelid = $1::regclass
     and contype = 'c'`,
    [copy],
  );
  for (const row of normalized.rows) expected.set(row.name, row.definition);

  // PostgreSQL 18 also records NOT NULL as constraints ('n'); nullability is compared per column.
  const { rows } = await client.query<{ name: string; definition: string }>(
    `select conname as name, pg_get_constraintdef(oid) as definition from pg_constraint where conrelid = $1::regclass
     and contype <> 'n'`,
    [`oxide_batch.${config.name}`],
  );
  const actual = new Map(rows.map((row) => [row.name, row.definition]));
  for (const [name, definition] of expected) {
    const db = actual.get(name);
    if (db === undefined) problems.push(`${config.name}: constraint ${name} missing in the database`);
    else if (db !== definition)
      problems.push(`${config.name}: constraint ${name} differs: db ${db}, drizzle ${definition}`);
  }
  for (const name of actual.keys()) {
    if (!declared.has(name))
      problems.push(`${config.name}: constraint ${name} in the database, not in the Drizzle file`);
  }
  return problems;
}

function indexKey(key: Partial<IndexedColumn | SQL>): string {
  if (is(key, SQL)) return `(${render(key)})`;
  const { name, indexConfig } = key as IndexedColumn;
  return [`"${name}"`, indexConfig?.opClass, indexConfig?.order, indexConfig?.nulls && `nulls ${indexConfig.nulls}`]
    .filter(Boolean)
    .join(' ');
}

// What an index is, without its name and table: UNIQUE, method, keys, storage and predicate.
const indexShape = (definition: string) => definition.replace(/^CREATE (UNIQUE )?INDEX \S+ ON (ONLY )?\S+ /, '$1$2');

async function compareIndexes(client: pg.PoolClient, config: TableConfig, copy: string): Promise<string[]> {
  const problems: string[] = [];
  // Indexes behind primary-key and unique constraints were compared as constraints.
  const { rows } = await client.query<{ name: string; definition: string }>(
    `select c.relname as name, pg_get_indexdef(i.indexrelid) as definition
       from pg_index i join pg_class c on c.oid = i.indexrelid
      where i.indrelid = $1::regclass
        and not exists (select 1 from pg_constraint k where k.conindid = i.indexrelid
        and k.contype in ('p', 'u', 'x'))`,
    [`oxide_batch.${config.name}`],
  );
  const dbIndexes = new Map(rows.map((row) => [row.name, row.definition]));

  for (const [position, index] of config.indexes.entries()) {
    const name = index.config.name ?? `(unnamed index ${position})`;
    const probeName = `${config.name}_probe_${position}`;
    const storage = Object.entries(index.config.with ?? {});
    const statement =
      `create ${index.config.unique ? 'unique ' : ''}index "${probeName}"
       on ${index.config.only ? 'only ' : ''}${copy} ` +
      `using ${index.config.method ?? 'btree'} (${index.config.columns.map(indexKey).join(', ')})` +
      (storage.length > 0 ? ` with (${storage.map(([key, value]) => `${key} = ${value}`).join(', ')})` : '') +
      (index.config.where ? ` where ${render(index.config.where)}` : '');
    const created = await attempt(client, statement);
    if (created.error !== undefined) {
      problems.push(`${config.name}: Postgres rejects Drizzle index ${name}: ${created.error}`);
      dbIndexes.delete(name);
      continue;
    }
    const probe = await client.query<{ definition: string }>(`select pg_get_indexdef($1::regclass) as definition`, [
      `pg_temp."${probeName}"`,
    ]);
    const drizzleShape = indexShape(probe.rows[0]?.definition ?? '');
    const db = dbIndexes.get(name);
    dbIndexes.delete(name);
    if (db === undefined) problems.push(`${config.name}: index ${name} missing in the database`);
    else if (indexShape(db) !== drizzleShape)
      problems.push(`${config.name}: index ${name} differs: db ${indexShape(db)}, drizzle ${drizzleShape}`);
  }
  // Keel's own filter indexes (lib/db/runtime-indexes.ts) are not the runtime's schema.
  for (const name of dbIndexes.keys()) {
    if (!KEEL_INDEX_NAMES.has(name))
      problems.push(`${config.name}: index ${name} in the database, not in the Drizzle file`);
  }
  return problems;
}

/** Every difference between the database's oxide_batch schema and the Drizzle file, inside the caller's transaction. */
async function compareWithDrizzle(client: pg.PoolClient): Promise<string[]> {
  // Catalog text qualifies names by search_path; an empty one prints the same on every connection.
  await client.query(`set local search_path = ''`);
  const problems: string[] = [];
  const { rows } = await client.query<{ name: string }>(
    `select relname as name from pg_class where relnamespace = 'oxide_batch'::regnamespace and relkind in ('r', 'p')
     order by 1`,
  );
  const dbTables = new Set(rows.map((row) => row.name));
  const configs = drizzleTables.map((table) => getTableConfig(table));
  for (const name of dbTables) {
    if (!configs.some((config) => config.name === name))
      problems.push(`${name}: table in the database, not in the Drizzle file`);
  }
  for (const config of configs) {
    if (config.schema !== 'oxide_batch')
      problems.push(`${config.name}: Drizzle schema ${config.schema}, not oxide_batch`);
    else if (!dbTables.has(config.name)) problems.push(`${config.name}: table missing in the database`);
    else {
      problems.push(...(await compareColumns(client, config)));
      const copy = await scratchCopy(client, config);
      problems.push(...(await compareConstraints(client, config, copy)));
      problems.push(...(await compareIndexes(client, config, copy)));
    }
  }
  return problems;
}

/**
 * Runs the comparison (and any sabotage before it) in a transaction
 * that is rolled back, taking the scratch tables with it.
 */
async function inRolledBackTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    return await work(client);
  } finally {
    await client.query('rollback');
    client.release();
  }
}

const KEEL_INDEX_NAMES = new Set(RUNTIME_INDEXES.map((index) => index.name));

describe('oxide_batch schema: bootstrap SQL and Drizzle mirror', () => {
  it('agree on every table, column, default, constraint and index', async () => {
    const { pool } = await freshDatabase();
    const problems = await inRolledBackTransaction(pool, compareWithDrizzle);
    expect(problems).toEqual([]);
  });

  it('reports a changed CHECK and a dropped index, and nothing else', async () => {
    const { pool } = await freshDatabase();
    const problems = await inRolledBackTransaction(pool, async (client) => {
      await client.query(`
        alter table oxide_batch.ob_job_execution
          drop constraint ob_job_execution_attempt_check,
          add constraint ob_job_execution_attempt_check check (attempt >= 0);
        drop index oxide_batch.ob_operator_request_job_execution_id_idx;`);
      return compareWithDrizzle(client);
    });
    expect(problems).toEqual([
      'ob_job_execution: constraint ob_job_execution_attempt_check differs: ' +
        'db CHECK ((attempt >= 0)), drizzle CHECK ((attempt > 0))',
      'ob_operator_request: index ob_operator_request_job_execution_id_idx missing in the database',
    ]);
  });
});
