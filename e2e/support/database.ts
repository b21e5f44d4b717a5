import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import pg from 'pg';

/**
 * A client on the embedded database the e2e server started: the password and the
 * port come from its home (KEEL_E2E_HOME, as in playwright.config.ts), the port
 * from line 4 of postmaster.pid, because a taken preferred port is replaced.
 */
export async function e2eDatabase(): Promise<pg.Client> {
  const home = resolve(process.env.KEEL_E2E_HOME ?? '.keel/e2e');
  const password = readFileSync(join(home, 'pg-password'), 'utf8').trim();
  const port = Number(readFileSync(join(home, 'pg', 'postmaster.pid'), 'utf8').split('\n')[3]);
  const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', password, database: 'keel' });
  await client.connect();
  return client;
}
