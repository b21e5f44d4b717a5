import type pg from 'pg';

/** The oxide-batch schema version Keel reads and writes. */
export const REQUIRED_RUNTIME_SCHEMA_VERSION = 3;

export type RuntimeSchemaState = { kind: 'absent' } | { kind: 'versioned'; version: number } | { kind: 'unversioned' };

export async function readRuntimeSchemaState(client: pg.ClientBase | pg.Pool): Promise<RuntimeSchemaState> {
  const { rows } = await client.query<{ has_schema: boolean; has_version_table: boolean }>(
    `select exists(select 1 from pg_namespace where nspname = 'oxide_batch') as has_schema,
            to_regclass('oxide_batch.ob_schema_version') is not null as has_version_table`,
  );
  const state = rows[0];
  if (!state?.has_schema) return { kind: 'absent' };
  if (!state.has_version_table) return { kind: 'unversioned' };
  const version = await client.query<{ version: number }>(
    'select max(version)::int as version from oxide_batch.ob_schema_version',
  );
  const value = version.rows[0]?.version;
  return value === null || value === undefined ? { kind: 'unversioned' } : { kind: 'versioned', version: value };
}
