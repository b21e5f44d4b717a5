import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toNodeHandler } from 'better-auth/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresSignInLockout } from '../../lib/adapters/sign-in-lockout';
import { consoleOrigins, createAuth, type KeelAuth } from '../../lib/auth/auth';
import { AUTH_HTTP_ENDPOINTS, createAuthSurface } from '../../lib/auth/http-surface';
import { createUserAccount } from '../../lib/auth/users';
import { LOCKOUT_POLICY } from '../../lib/domain/sign-in-lockout';
import { CLIENT_ADDRESS_HEADER, parseTrustedProxies, stampClientAddress } from '../../lib/http/client-address';
import { stampRequestId } from '../../lib/http/request-id';
import { freshDatabase, type TestDatabase } from '../support/database';

const PORT = 3998;
const ORIGIN = `http://localhost:${PORT}`;
const PASSWORD = 'correct-horse';

/**
 * The auth surface behind a real Node server that derives the client address and
 * stamps the request id the way lib/cli/server.mjs does, so X-Forwarded-For and
 * X-Request-Id are tested as a client sends them.
 */
async function serve(
  handler: (request: Request) => Promise<Response>,
  trusted: string[],
): Promise<{ server: Server; url: string }> {
  const { proxies } = parseTrustedProxies(trusted);
  const node = toNodeHandler(handler);
  const server = createServer((req, res) => {
    stampClientAddress(req, proxies);
    stampRequestId(req);
    void node(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe('the /api/auth surface', () => {
  let database: TestDatabase;
  let auth: KeelAuth;
  let surface: (request: Request) => Promise<Response>;
  let direct: { server: Server; url: string };
  let behindProxy: { server: Server; url: string };
  const now = { value: new Date() };

  beforeAll(async () => {
    database = await freshDatabase();
    auth = createAuth(database.db, { secret: 's'.repeat(64), port: PORT, signInPerMinute: 3 });
    for (const [username, role] of [
      ['boss', 'admin'],
      ['ops', 'operator'],
      ['appr', 'approver'],
      ['locky', 'viewer'],
      ['other', 'viewer'],
    ] as const) {
      expect((await createUserAccount(auth, { username, name: username, role, password: PASSWORD })).ok).toBe(true);
    }
    surface = createAuthSurface({
      auth,
      lockout: postgresSignInLockout(database.db),
      allowedOrigins: consoleOrigins({ port: PORT }),
      clock: () => now.value,
    });
    direct = await serve(surface, []);
    // Here the test client (127.0.0.1) is the trusted proxy, so each test can pose as its own client.
    behindProxy = await serve(surface, ['127.0.0.1']);
  });

  afterAll(async () => {
    direct?.server.close();
    behindProxy?.server.close();
  });

  const signIn = (base: string, username: string, password: string, headers: Record<string, string> = {}) =>
    fetch(`${base}/api/auth/sign-in/username`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: ORIGIN, ...headers },
      body: JSON.stringify({ username, password }),
    });

  async function sessionCookie(username: string, address: string): Promise<string> {
    const response = await signIn(behindProxy.url, username, PASSWORD, { 'x-forwarded-for': address });
    expect(response.status).toBe(200);
    const cookie = response.headers.getSetCookie().find((c) => c.startsWith('better-auth.session_token='));
    expect(cookie).toBeDefined();
    return cookie!.split(';')[0]!;
  }

  const auditCount = async (where: string) =>
    (await database.pool.query(`select count(*)::int as n from keel.audit_event where ${where}`)).rows[0].n as number;

  it('answers 404 on every better-auth endpoint but sign-in, sign-out and get-session, even for an admin', async () => {
    const cookie = await sessionCookie('boss', '10.20.0.1');
    const endpoints = Object.values(
      auth.api as Record<string, { path?: string; options?: { method?: string | string[] } }>,
    )
      .filter((endpoint) => typeof endpoint.path === 'string')
      .flatMap((endpoint) => {
        const method = endpoint.options?.method ?? 'GET';
        return (Array.isArray(method) ? method : [method]).map((m) => `${m === '*' ? 'POST' : m} ${endpoint.path}`);
      });
    // The list comes from better-auth itself, so an endpoint a new version adds is covered too.
    expect(endpoints.length).toBeGreaterThan(40);
    for (const must of [
      'POST /admin/impersonate-user',
      'POST /admin/set-role',
      'POST /admin/create-user',
      'POST /admin/ban-user',
      'POST /admin/set-user-password',
      'POST /admin/revoke-user-sessions',
      'POST /admin/update-user',
      'POST /admin/remove-user',
      'POST /update-user',
      'POST /change-password',
      'GET /list-sessions',
      'POST /is-username-available',
      'POST /sign-up/email',
    ]) {
      expect(endpoints).toContain(must);
    }
    const reachable: string[] = [];
    for (const endpoint of endpoints) {
      const [method, path] = endpoint.split(' ') as [string, string];
      const response = await fetch(`${behindProxy.url}/api/auth${path}`, {
        method,
        headers: { cookie, origin: ORIGIN, 'content-type': 'application/json', 'x-forwarded-for': '10.20.1.1' },
        body:
          method === 'GET'
            ? undefined
            : JSON.stringify({
                userId: 'x',
                role: 'admin',
                username: 'renamed',
                newPassword: 'x'.repeat(12),
                currentPassword: PASSWORD,
              }),
      });
      if (response.status !== 404) reachable.push(endpoint);
      else expect(await response.json()).toEqual({ code: 'NOT_FOUND', message: 'No such endpoint.' });
    }
    expect(reachable.sort()).toEqual([...AUTH_HTTP_ENDPOINTS].sort());
    // Nothing changed: no role, name, password or session was touched through them.
    const users = await database.pool.query(`select username, role from keel.user order by username`);
    expect(users.rows).toEqual([
      { username: 'appr', role: 'approver' },
      { username: 'boss', role: 'admin' },
      { username: 'locky', role: 'viewer' },
      { username: 'ops', role: 'operator' },
      { username: 'other', role: 'viewer' },
    ]);
  });

  it('makes impersonation impossible: no route, and no admin permission for it', async () => {
    const cookie = await sessionCookie('boss', '10.20.0.2');
    const target = await database.pool.query(`select id from keel.user where username = 'appr'`);
    const response = await fetch(`${direct.url}/api/auth/admin/impersonate-user`, {
      method: 'POST',
      headers: { cookie, origin: ORIGIN, 'content-type': 'application/json' },
      body: JSON.stringify({ userId: target.rows[0].id }),
    });
    expect(response.status).toBe(404);
    const allowed = await auth.api.userHasPermission({
      body: { role: 'admin', permissions: { user: ['impersonate'] } },
    });
    expect(allowed.success).toBe(false);
    const impersonated = await database.pool.query(
      `select count(*)::int as n from keel.session where impersonated_by is not null`,
    );
    expect(impersonated.rows[0].n).toBe(0);
  });

  it('hands no session token to page scripts: sign-in and get-session bodies carry none', async () => {
    const response = await signIn(behindProxy.url, 'ops', PASSWORD, { 'x-forwarded-for': '10.20.0.3' });
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body).not.toHaveProperty('token');
    expect(body.user).toMatchObject({ username: 'ops' });
    const cookie = response.headers.getSetCookie().find((c) => c.startsWith('better-auth.session_token='))!;
    expect(cookie).toMatch(/HttpOnly/i);
    const token = decodeURIComponent(cookie.split(';')[0]!.split('=')[1]!).split('.')[0]!;
    expect(JSON.stringify(body)).not.toContain(token);
    const session = await fetch(`${direct.url}/api/auth/get-session`, { headers: { cookie: cookie.split(';')[0]! } });
    expect(session.status).toBe(200);
    const sessionBody = await session.json();
    expect(sessionBody.user).toMatchObject({ username: 'ops' });
    expect(sessionBody.session).not.toHaveProperty('token');
    expect(JSON.stringify(sessionBody)).not.toContain(token);
  });

  it('refuses a sign-in posted from a foreign origin, or with none, before checking the password', async () => {
    const foreign = await signIn(direct.url, 'ops', PASSWORD, { origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(foreign.headers.getSetCookie()).toEqual([]);
    expect(await foreign.json()).toMatchObject({ code: 'FOREIGN_ORIGIN' });
    const none = await fetch(`${direct.url}/api/auth/sign-in/username`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'ops', password: PASSWORD }),
    });
    expect(none.status).toBe(403);
  });

  it('answers a NUL, a control or broken Unicode in any sign-in field 400, before the lockout is read', async () => {
    const failures = await auditCount(`action like 'auth.%'`);
    for (const body of [
      { username: 'lo\u0000cky', password: PASSWORD },
      { username: 'locky\u0007', password: PASSWORD },
      { username: 'locky\uD800', password: PASSWORD },
      { username: 'locky', password: 'x\u0000y' },
      { username: 'locky', password: PASSWORD, callbackURL: '/\u0000' },
    ]) {
      const response = await fetch(`${direct.url}/api/auth/sign-in/username`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: ORIGIN },
        body: JSON.stringify(body),
      });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(await response.json()).toMatchObject({ code: 'INVALID_INPUT' });
    }
    // Nothing was counted against the account, and nothing audited.
    const { rows } = await database.pool.query(
      `select count(*)::int as n from keel.sign_in_lockout where username like 'lo%'`,
    );
    expect(rows[0].n).toBe(0);
    expect(await auditCount(`action like 'auth.%'`)).toBe(failures);
  });

  it('keys the rate limit on the socket: 40 spoofed X-Forwarded-For from an untrusted peer are limited', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 40; i += 1) {
      // A different name each time, so only the address limit (3 a minute) can refuse.
      const response = await signIn(direct.url, `nobody${i}`, 'wrong-password', {
        'x-forwarded-for': `198.51.100.${i + 1}`,
        [CLIENT_ADDRESS_HEADER]: `203.0.113.${i + 1}`,
      });
      statuses.push(response.status);
    }
    expect(statuses.slice(0, 3)).toEqual([401, 401, 401]);
    expect(statuses.filter((s) => s === 429)).toHaveLength(37);
    const keys = await database.pool.query(`select key from keel.rate_limit where key like '%sign-in%'`);
    expect(keys.rows.map((r) => r.key)).toContain('127.0.0.1|/sign-in/username');
    expect(keys.rows.some((r) => /198\.51\.100|203\.0\.113/.test(r.key))).toBe(false);
  });

  it('behind a trusted proxy, keys on the first untrusted hop from the right, not what the client wrote', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      statuses.push(
        (
          await signIn(behindProxy.url, `someone${i}`, 'wrong-password', {
            'x-forwarded-for': `6.6.6.${i}, 192.0.2.77`,
          })
        ).status,
      );
    }
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
    const sessions = await database.pool.query(
      `select ip_address from keel.session s join keel.user u on u.id = s.user_id where u.username = 'ops'`,
    );
    expect(sessions.rows).toContainEqual({ ip_address: '10.20.0.3' });
  });

  it('locks an account after 5 failures from any address, audited, even to the right password, then not', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < LOCKOUT_POLICY.failuresBeforeLock; i += 1) {
      statuses.push(
        (await signIn(behindProxy.url, 'Locky', 'wrong-password', { 'x-forwarded-for': `192.0.2.${100 + i}` })).status,
      );
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401]);
    expect(
      await auditCount(
        `action = 'auth.lockout' and target_id = 'locky' and outcome = 'REFUSED' and code = 'ACCOUNT_LOCKED'`,
      ),
    ).toBe(1);

    // A client cannot choose the request id its refusal is audited under.
    const locked = await signIn(behindProxy.url, 'locky', PASSWORD, {
      'x-forwarded-for': '192.0.2.200',
      'x-request-id': 'chosen-by-the-client',
    });
    expect(locked.status).toBe(429);
    expect(locked.headers.get('retry-after')).toBe('30');
    expect(await locked.json()).toMatchObject({ code: 'ACCOUNT_LOCKED' });
    expect(locked.headers.getSetCookie()).toEqual([]);
    expect(await auditCount(`action = 'auth.sign_in' and target_id = 'locky' and code = 'ACCOUNT_LOCKED'`)).toBe(1);
    const refusal = await database.pool.query(
      `select request_id from keel.audit_event where action = 'auth.sign_in' and target_id = 'locky'
       and code = 'ACCOUNT_LOCKED'`,
    );
    expect(refusal.rows[0].request_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    // Another account is not affected.
    expect((await signIn(behindProxy.url, 'other', PASSWORD, { 'x-forwarded-for': '192.0.2.201' })).status).toBe(200);

    // 30 s later the right password works and forgets the failures.
    now.value = new Date(now.value.getTime() + 30_001);
    expect((await signIn(behindProxy.url, 'locky', PASSWORD, { 'x-forwarded-for': '192.0.2.202' })).status).toBe(200);
    const state = await database.pool.query(
      `select count(*)::int as n from keel.sign_in_lockout where username = 'locky'`,
    );
    expect(state.rows[0].n).toBe(0);
  });

  it('doubles the lock for the next streak, and holds it across processes (the state is in Postgres)', async () => {
    for (let round = 0; round < 2; round += 1) {
      for (let i = 0; i < LOCKOUT_POLICY.failuresBeforeLock; i += 1) {
        expect(
          (
            await signIn(behindProxy.url, 'ghost', 'wrong-password', {
              'x-forwarded-for': `192.0.2.${10 + round * 10 + i}`,
            })
          ).status,
        ).toBe(401);
      }
      const refused = await signIn(behindProxy.url, 'ghost', 'wrong-password', { 'x-forwarded-for': '192.0.2.99' });
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe(round === 0 ? '30' : '60');
      now.value = new Date(now.value.getTime() + (round === 0 ? 30_001 : 0));
    }
    // A second surface on its own pool, as another process would have, sees the same lock.
    const otherProcess = createAuthSurface({
      auth,
      lockout: postgresSignInLockout(database.db),
      allowedOrigins: consoleOrigins({ port: PORT }),
      clock: () => now.value,
    });
    const request = new Request(`${ORIGIN}/api/auth/sign-in/username`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: ORIGIN, [CLIENT_ADDRESS_HEADER]: '192.0.2.98' },
      body: JSON.stringify({ username: 'ghost', password: 'wrong-password' }),
    });
    expect((await otherProcess(request)).status).toBe(429);
    expect(await auditCount(`action = 'auth.lockout' and target_id = 'ghost'`)).toBe(2);
  });
});
