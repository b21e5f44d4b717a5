import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import type pg from 'pg';
import { err, ok, type Result } from '../domain/result';
import { createIndexStatement, RUNTIME_INDEXES } from './runtime-indexes';
import { readRuntimeSchemaState, REQUIRED_RUNTIME_SCHEMA_VERSION, type RuntimeSchemaState } from './runtime-schema';

export { readRuntimeSchemaState, REQUIRED_RUNTIME_SCHEMA_VERSION };

const BOOTSTRAP_SQL = fileURLToPath(new URL('./bootstrap/oxide-batch.sql', import.meta.url));
const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../drizzle', import.meta.url));
// Serializes concurrent starts of several Keel processes against one database.
const MIGRATION_LOCK_KEY = 0x6b65656c; // "keel"

export type MigrationRefusal =
  | { code: 'RUNTIME_SCHEMA_TOO_OLD'; version: number; message: string }
  | { code: 'RUNTIME_SCHEMA_UNVERSIONED'; message: string };

export interface MigrationReport {
  runtimeSchema: 'bootstrapped' | 'attached';
  runtimeVersion: number;
}

function refusalFor(state: RuntimeSchemaState): MigrationRefusal | null {
  if (state.kind === 'unversioned') {
    return {
      code: 'RUNTIME_SCHEMA_UNVERSIONED',
      message:
        'The database has an oxide_batch schema without a schema version row. Keel will not guess what it holds; ' +
        'migrate the oxide-batch runtime to schema version 3 first.',
    };
  }
  if (state.kind === 'versioned' && state.version < REQUIRED_RUNTIME_SCHEMA_VERSION) {
    return {
      code: 'RUNTIME_SCHEMA_TOO_OLD',
      version: state.version,
      message:
        `The oxide_batch schema is at version ${state.version}; ` +
        `Keel needs version ${REQUIRED_RUNTIME_SCHEMA_VERSION} or later. ` +
        'Keel never alters the runtime schema: upgrade the oxide-batch runtime, then start Keel again.',
    };
  }
  return null;
}

/**
 * Brings a database to what Keel needs: the runtime schema is bootstrapped only when
 * absent and left untouched when present at version >= 3; Keel's own schemas follow
 * the committed drizzle-kit migrations.
 */
export async function migrateDatabase(pool: pg.Pool): Promise<Result<MigrationReport, MigrationRefusal>> {
  const client = await pool.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      const state = await readRuntimeSchemaState(client);
      const refusal = refusalFor(state);
      if (refusal) return err(refusal);
      let runtimeSchema: MigrationReport['runtimeSchema'] = 'attached';
      if (state.kind === 'absent') {
        await client.query('begin');
        try {
          await client.query(readFileSync(BOOTSTRAP_SQL, 'utf8'));
          // Keel owns a schema it bootstrapped, so its filter indexes come with it.
          for (const index of RUNTIME_INDEXES) await client.query(createIndexStatement(index, false));
          await client.query('commit');
        } catch (error) {
          await client.query('rollback');
          throw error;
        }
        runtimeSchema = 'bootstrapped';
      }
      await migrate(drizzle(client), { migrationsFolder: MIGRATIONS_FOLDER, migrationsSchema: 'keel' });
      const after = await readRuntimeSchemaState(client);
      return ok({ runtimeSchema, runtimeVersion: after.kind === 'versioned' ? after.version : 0 });
    } finally {
      await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    client.release();
  }
}
