import { chmodSync, mkdirSync, mkdtempSync } from 'node:fs';
import { join, resolve } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../lib/db/embedded';
import { migrateDatabase } from '../../lib/db/migrate';
import { databaseUrl } from './urls';

declare module 'vitest' {
  export interface ProvidedContext {
    adminUrl: string;
    templateDatabase: string;
  }
}

/**
 * One PostgreSQL for the integration run: DATABASE_URL when given, otherwise a
 * throwaway embedded cluster. Migrations run once into a template database; each
 * test file clones it (CREATE DATABASE ... TEMPLATE), so every file starts fresh.
 */
export default async function setup(project: TestProject) {
  let embedded: EmbeddedDatabase | null = null;
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    mkdirSync(resolve('.keel'), { recursive: true });
    const home = mkdtempSync(join(resolve('.keel'), 'test-'));
    chmodSync(home, 0o755); // the cluster runs as the postgres user when we are root
    embedded = await startEmbeddedPostgres({ home, ephemeral: true });
    adminUrl = embedded.url('postgres');
  }
  const templateDatabase = `keel_template_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${templateDatabase}`);
  await admin.query(`create database ${templateDatabase}`);
  const pool = new pg.Pool({ connectionString: databaseUrl(adminUrl, templateDatabase), max: 2 });
  const migrated = await migrateDatabase(pool);
  await pool.end();
  if (!migrated.ok) throw new Error(`template migration refused: ${migrated.error.message}`);
  project.provide('adminUrl', adminUrl);
  project.provide('templateDatabase', templateDatabase);
  return async () => {
    await admin.query(`drop database if exists ${templateDatabase} with (force)`);
    await admin.end();
    await embedded?.stop();
  };
}
