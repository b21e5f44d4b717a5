import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, inject } from 'vitest';
import { createDatabase, createPool, type Database } from '../../lib/db/client';
import { databaseUrl } from './urls';

export interface TestDatabase {
  name: string;
  url: string;
  pool: pg.Pool;
  db: Database;
  /** Another pool on the same database, for a second concurrent client; `options` as createPool's. */
  newPool: (max?: number, options?: Parameters<typeof createPool>[2]) => pg.Pool;
}

async function adminQuery(sql: string): Promise<void> {
  const admin = new pg.Client({ connectionString: inject('adminUrl') });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

/**
 * A database of this test file's own, cloned from the migrated template (or empty,
 * for tests of the migrator itself), dropped when the file ends.
 */
export async function freshDatabase(options: { empty?: boolean; poolSize?: number } = {}): Promise<TestDatabase> {
  const name = `keel_t_${randomBytes(6).toString('hex')}`;
  await adminQuery(
    options.empty ? `create database ${name}` : `create database ${name} template ${inject('templateDatabase')}`,
  );
  const url = databaseUrl(inject('adminUrl'), name);
  const pools: pg.Pool[] = [];
  const newPool = (max = 10, poolOptions: Parameters<typeof createPool>[2] = {}) => {
    const pool = createPool(url, max, poolOptions);
    pools.push(pool);
    return pool;
  };
  const pool = newPool(options.poolSize ?? 10);
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.end()));
    await adminQuery(`drop database if exists ${name} with (force)`);
  });
  return { name, url, pool, db: createDatabase(pool), newPool };
}
