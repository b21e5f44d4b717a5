import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { formatSettingErrors, parseSettings, type Settings } from '../config/settings';
import { discardEmbeddedCluster, startEmbeddedPostgres, type EmbeddedDatabase } from '../db/embedded';

/** Where the embedded default keeps its cluster and generated secrets. */
export function keelHome(): string {
  return resolve(process.env.KEEL_HOME ?? '.keel');
}

function generatedCheckpointKey(home: string): string {
  mkdirSync(home, { recursive: true });
  const path = join(home, 'checkpoint.key');
  if (existsSync(path)) return readFileSync(path, 'utf8').trim();
  const key = randomBytes(32).toString('hex');
  writeFileSync(path, `${key}\n`, { mode: 0o600 });
  return key;
}

export interface ResolvedEnvironment {
  settings: Settings;
  /** The environment the console server runs with. */
  env: Record<string, string>;
  embedded: EmbeddedDatabase | null;
  stop: () => Promise<void>;
}

/**
 * Settings from the environment; when DATABASE_URL is unset, an embedded PostgreSQL
 * under `.keel/` with a generated checkpoint key and demo mode on.
 */
export async function resolveEnvironment(
  log: (line: string) => void,
  options: { fresh?: boolean } = {},
): Promise<ResolvedEnvironment> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  let embedded: EmbeddedDatabase | null = null;
  if (!env.DATABASE_URL) {
    const first = parseSettings(env); // report bad settings before starting anything
    if (!first.ok) throw new SettingsRefused(formatSettingErrors(first.error));
    const home = keelHome();
    if (options.fresh) {
      log(`--fresh: discarding the embedded database in ${home}`);
      discardEmbeddedCluster(home);
    }
    env.KEEL_CHECKPOINT_KEY ??= generatedCheckpointKey(home);
    env.KEEL_DEMO ??= '1';
    log(`starting embedded PostgreSQL in ${join(home, 'pg')}`);
    embedded = await startEmbeddedPostgres({
      home,
      preferredPort: Number(env.KEEL_EMBEDDED_PG_PORT ?? 54329),
      log,
      postgresLog: env.KEEL_LOG_POSTGRES === '1' ? log : undefined,
    });
    env.DATABASE_URL = embedded.url('keel');
    await ensureDatabaseExists(embedded.url('postgres'), 'keel');
  }
  const parsed = parseSettings(env);
  if (!parsed.ok) {
    await embedded?.stop();
    throw new SettingsRefused(formatSettingErrors(parsed.error));
  }
  const running = embedded;
  return { settings: parsed.value, env, embedded, stop: async () => running?.stop() };
}

export class SettingsRefused extends Error {}

async function ensureDatabaseExists(adminUrl: string, name: string): Promise<void> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount === 0) await client.query(`create database ${name}`);
  } finally {
    await client.end();
  }
}
