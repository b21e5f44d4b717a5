import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { createAuth, type KeelAuth } from '../../lib/auth/auth';
import { createUserAccount } from '../../lib/auth/users';
import { CLIENT_ADDRESS_HEADER } from '../../lib/http/client-address';
import { freshDatabase, type TestDatabase } from '../support/database';

const run = promisify(execFile);
const PORT = 3999;

function signInRequest(username: string, password: string, ip: string): Request {
  return new Request(`http://localhost:${PORT}/api/auth/sign-in/username`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: `http://localhost:${PORT}`, [CLIENT_ADDRESS_HEADER]: ip },
    body: JSON.stringify({ username, password }),
  });
}

describe('sign-in', () => {
  let database: TestDatabase;
  let auth: KeelAuth;

  beforeAll(async () => {
    database = await freshDatabase();
    auth = createAuth(database.db, { secret: 's'.repeat(64), port: PORT, signInPerMinute: 3 });
    for (const [username, role] of [
      ['ops', 'operator'],
      ['gone', 'viewer'],
      ['lim', 'viewer'],
    ] as const) {
      const created = await createUserAccount(auth, { username, name: username, role, password: 'correct-horse' });
      expect(created.ok).toBe(true);
    }
  });

  it('signs in with a username and password and stores the session in Postgres', async () => {
    const response = await auth.handler(signInRequest('ops', 'correct-horse', '10.1.0.1'));
    expect(response.status).toBe(200);
    expect(response.headers.get('set-cookie')).toMatch(/better-auth\.session_token=/);
    const sessions = await database.pool.query(
      `select s.ip_address from keel.session s join keel.user u on u.id = s.user_id where u.username = 'ops'`,
    );
    expect(sessions.rows).toEqual([{ ip_address: '10.1.0.1' }]);
  });

  it('refuses a wrong password with 401 and no session', async () => {
    const response = await auth.handler(signInRequest('ops', 'wrong-password', '10.1.0.2'));
    expect(response.status).toBe(401);
    expect(response.headers.get('set-cookie') ?? '').not.toMatch(/session_token=[^;]+;/);
  });

  it('rate-limits sign-in per client address', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i += 1)
      statuses.push((await auth.handler(signInRequest('lim', 'wrong-password', '10.9.9.9'))).status);
    expect(statuses.slice(0, 3)).toEqual([401, 401, 401]);
    expect(statuses.slice(3)).toEqual([429, 429]);
    // Another address is not affected, and the right password still works there.
    expect((await auth.handler(signInRequest('lim', 'correct-horse', '10.9.9.10'))).status).toBe(200);
  });

  it('refuses a disabled (banned) user', async () => {
    await database.pool.query(`update keel.user set banned = true where username = 'gone'`);
    const response = await auth.handler(signInRequest('gone', 'correct-horse', '10.1.0.3'));
    expect(response.status).toBe(403);
  });

  it('refuses weak passwords, bad usernames and duplicates when creating users', async () => {
    expect(
      await createUserAccount(auth, { username: 'newbie', name: 'n', role: 'viewer', password: 'short' }),
    ).toMatchObject({ ok: false, error: { code: 'WEAK_PASSWORD' } });
    expect(
      await createUserAccount(auth, { username: 'Bad Name!', name: 'n', role: 'viewer', password: 'long-enough' }),
    ).toMatchObject({ ok: false, error: { code: 'INVALID_USERNAME' } });
    expect(
      await createUserAccount(auth, { username: 'ops', name: 'n', role: 'viewer', password: 'long-enough' }),
    ).toMatchObject({ ok: false, error: { code: 'USER_EXISTS' } });
    const users = await database.pool.query(
      `select count(*)::int as n from keel.user where username in ('newbie', 'bad name!')`,
    );
    expect(users.rows[0].n).toBe(0);
  });

  it('creates a user with a role from the CLI, who can then sign in', async () => {
    const env = {
      ...process.env,
      DATABASE_URL: database.url,
      KEEL_CHECKPOINT_KEY: 'ef'.repeat(32),
      KEEL_NEW_USER_PASSWORD: 'cli-password-1',
    };
    const result = await run(
      process.execPath,
      [
        '--import',
        'tsx',
        '--conditions=react-server',
        'bin/keel.ts',
        'create-user',
        '--username',
        'carol',
        '--role',
        'approver',
        '--name',
        'Carol',
      ],
      { env },
    );
    expect(result.stdout).toContain('created carol with role approver');
    const row = await database.pool.query(`select role, name from keel.user where username = 'carol'`);
    expect(row.rows).toEqual([{ role: 'approver', name: 'Carol' }]);
    expect((await auth.handler(signInRequest('carol', 'cli-password-1', '10.1.0.4'))).status).toBe(200);
    const bad = await run(
      process.execPath,
      [
        '--import',
        'tsx',
        '--conditions=react-server',
        'bin/keel.ts',
        'create-user',
        '--username',
        'dave',
        '--role',
        'root',
      ],
      { env },
    ).catch((e: { code: number; stderr: string }) => e);
    expect(bad).toMatchObject({ code: 2 });
    expect((bad as { stderr: string }).stderr).toContain('unknown role root');
  });
});
