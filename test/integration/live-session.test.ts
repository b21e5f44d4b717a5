import { createHmac } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createAuth, type KeelAuth } from '../../lib/auth/auth';
import { readLiveSession, sessionRules, type SessionRules } from '../../lib/auth/live-session';
import { createUserAccount } from '../../lib/auth/users';
import { freshDatabase, type TestDatabase } from '../support/database';
import { sessionTokenOf, signInCookie } from '../support/sign-in';

const PORT = 3998;
const SECRET = 'l'.repeat(64);

const signIn = (auth: KeelAuth, username: string) =>
  signInCookie(auth, { port: PORT, clientAddress: '10.2.0.1', username, password: 'correct-horse' });

type UserFields = { id: unknown; name: unknown; email: unknown; username?: unknown; role?: unknown; banned?: unknown };
const fields = (user: UserFields | undefined | null) =>
  user
    ? { id: user.id, name: user.name, email: user.email, username: user.username, role: user.role, banned: user.banned }
    : null;

describe('the direct session read answers as better-auth does, or leaves the answer to it', () => {
  let database: TestDatabase;
  let auth: KeelAuth;
  let rules: SessionRules;
  const betterAuthUser = async (cookie: string) =>
    fields((await auth.api.getSession({ headers: new Headers({ cookie }) }))?.user);

  beforeAll(async () => {
    database = await freshDatabase();
    auth = createAuth(database.db, { secret: SECRET, port: PORT, signInPerMinute: 100 });
    for (const [username, role] of [
      ['ada', 'approver'],
      ['bob', 'viewer'],
      ['cyd', 'operator'],
      ['dee', 'support'],
      ['eve', 'viewer'],
    ] as const) {
      expect(
        (await createUserAccount(auth, { username, name: `${username} name`, role, password: 'correct-horse' })).ok,
      ).toBe(true);
    }
    const found = sessionRules(await auth.$context);
    expect(found).not.toBeNull();
    rules = found!;
  });

  it('reads a fresh session in one statement with the user better-auth returns', async () => {
    const cookie = await signIn(auth, 'ada');
    const live = await readLiveSession(database.pool, rules, cookie);
    expect(live).toEqual({
      id: expect.any(String),
      name: 'ada name',
      email: expect.any(String),
      username: 'ada',
      role: 'approver',
      banned: false,
      timeZone: 'utc',
    });
    expect(fields(live)).toEqual(await betterAuthUser(cookie));
  });

  it('brings the user’s stored time zone preference along, as it stands at the read', async () => {
    const cookie = await signIn(auth, 'dee');
    expect((await readLiveSession(database.pool, rules, cookie))?.timeZone).toBe('utc');
    await database.pool.query(`update keel."user" set time_zone = 'Europe/Berlin' where username = 'dee'`);
    expect((await readLiveSession(database.pool, rules, cookie))?.timeZone).toBe('Europe/Berlin');
    await database.pool.query(`update keel."user" set time_zone = 'utc' where username = 'dee'`);
  });

  it('returns a disabled user as better-auth does, banned, for the caller to refuse', async () => {
    const cookie = await signIn(auth, 'eve');
    await database.pool.query(`update keel."user" set banned = true where username = 'eve'`);
    const live = await readLiveSession(database.pool, rules, cookie);
    expect(live?.banned).toBe(true);
    expect(fields(live)).toEqual(await betterAuthUser(cookie));
  });

  it('leaves a forged, tampered or unknown cookie to better-auth, which refuses it', async () => {
    const cookie = await signIn(auth, 'bob');
    const token = sessionTokenOf(cookie);
    const sign = (value: string, secret = SECRET) => {
      const signature = createHmac('sha256', secret).update(value).digest('base64');
      return `better-auth.session_token=${encodeURIComponent(`${value}.${signature}`)}`;
    };
    const cases = {
      'another secret': sign(token, 'x'.repeat(64)),
      'a changed token': cookie.replace(token, `${token.slice(0, -1)}${token.endsWith('a') ? 'b' : 'a'}`),
      'a session that does not exist': sign('no-such-session-token-000000000'),
      'no signature': `better-auth.session_token=${token}`,
      'no cookie': 'theme=dark',
    };
    for (const [what, forged] of Object.entries(cases)) {
      expect(await readLiveSession(database.pool, rules, forged), what).toBeUndefined();
      expect(await betterAuthUser(forged), what).toBeNull();
    }
    expect(await readLiveSession(database.pool, rules, null)).toBeUndefined();
  });

  it('leaves an expired session, and one due for refresh, to better-auth', async () => {
    const cookie = await signIn(auth, 'cyd');
    const token = sessionTokenOf(cookie);
    const setExpiry = (secondsFromNow: number) =>
      database.pool.query(`update keel.session set expires_at = now() + make_interval(secs => $2) where token = $1`, [
        token,
        secondsFromNow,
      ]);

    // Past updateAge: better-auth moves the expiry on (a write), so the direct read stays out of it.
    await setExpiry(rules.expiresInSeconds - rules.updateAgeSeconds - 60);
    expect(await readLiveSession(database.pool, rules, cookie)).toBeUndefined();
    expect((await betterAuthUser(cookie))?.username).toBe('cyd');
    const moved = await database.pool.query(
      `select extract(epoch from expires_at - now())::int as left from keel.session where token = $1`,
      [token],
    );
    expect(moved.rows[0].left).toBeGreaterThan(rules.expiresInSeconds - 60);
    // Refreshed, it is read directly again.
    expect((await readLiveSession(database.pool, rules, cookie))?.username).toBe('cyd');

    await setExpiry(-1);
    expect(await readLiveSession(database.pool, rules, cookie)).toBeUndefined();
    expect(await betterAuthUser(cookie)).toBeNull();
  });

  it('leaves a second copy of the cookie, or better-auth’s other session cookies, to better-auth', async () => {
    const cookie = await signIn(auth, 'dee');
    const other = await signIn(auth, 'ada');
    expect(await readLiveSession(database.pool, rules, `${cookie}; ${other}`)).toBeUndefined();
    for (const extra of ['better-auth.dont_remember=x', 'better-auth.session_data=x', 'better-auth.session_data.0=x']) {
      expect(await readLiveSession(database.pool, rules, `${cookie}; ${extra}`), extra).toBeUndefined();
    }
    // Cookies better-auth does not read change nothing.
    expect((await readLiveSession(database.pool, rules, `keel-theme=dark; ${cookie}`))?.username).toBe('dee');
  });

  it('follows no instance whose sessions are cached in cookies or never refreshed', async () => {
    const context = await auth.$context;
    for (const session of [
      { cookieCache: { enabled: true } },
      { disableSessionRefresh: true },
      { deferSessionRefresh: true },
    ]) {
      expect(sessionRules({ ...context, options: { ...context.options, session } })).toBeNull();
    }
  });
});
