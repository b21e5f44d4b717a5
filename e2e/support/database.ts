import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import pg from 'pg';

/**
 * A client on the embedded database the e2e server started: the password and the
 * port come from its home (KEEL_E2E_HOME, as in playwright.config.ts), the port
 * from line 4 of postmaster.pid, because a taken preferred port is replaced.
 */
export async function e2eDatabase(database = 'keel'): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: e2eDatabaseUrl(database) });
  await client.connect();
  return client;
}

/** The URL of a database in the e2e server's embedded cluster. */
export function e2eDatabaseUrl(database: string): string {
  const home = resolve(process.env.KEEL_E2E_HOME ?? '.keel/e2e');
  const password = readFileSync(join(home, 'pg-password'), 'utf8').trim();
  const port = Number(readFileSync(join(home, 'pg', 'postmaster.pid'), 'utf8').split('\n')[3]);
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
}

/** The part of a client a spec uses: its queries. */
export type SpecDatabase = Pick<pg.Client, 'query'>;

/**
 * One client for a spec file, connected before its first test and closed after its
 * last; the queries go to whichever client is open when they run.
 */
export function specDatabase(test: {
  beforeAll: (fn: () => Promise<void>) => void;
  afterAll: (fn: () => Promise<void>) => void;
}): SpecDatabase {
  let client: pg.Client | undefined;
  test.beforeAll(async () => {
    client = await e2eDatabase();
  });
  test.afterAll(async () => {
    await client?.end();
  });
  const query = ((...args: Parameters<pg.Client['query']>) => {
    if (!client) throw new Error('the spec database is used before its beforeAll ran');
    return (client.query as (...a: unknown[]) => unknown)(...args);
  }) as pg.Client['query'];
  return { query };
}
