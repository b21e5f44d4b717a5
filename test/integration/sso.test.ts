import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresSignInLockout } from '../../lib/adapters/sign-in-lockout';
import { postgresSsoRefusals } from '../../lib/adapters/sso-audit';
import { consoleOrigins, createAuth, type KeelAuth } from '../../lib/auth/auth';
import { createAuthSurface } from '../../lib/auth/http-surface';
import { createUserAccount } from '../../lib/auth/users';
import { OIDC_CALLBACK_PATH, parseSignInSettings } from '../../lib/config/oidc';
import type { SettingError } from '../../lib/config/settings';
import { freshDatabase, type TestDatabase } from '../support/database';
import { startTestProvider, type TestProvider } from '../support/oidc-provider';
import { CookieJar, logInAtProvider, startSsoSignIn, visitProvider } from '../support/oidc-flow';

const PORT = 3993;
const KEEL = `http://localhost:${PORT}`;
const CALLBACK = `${KEEL}${OIDC_CALLBACK_PATH}`;
const ROLE_MAP =
  'keel-admins=admin,keel-operators=operator,keel-approvers=approver,keel-support=support,keel-viewers=viewer';

describe('single sign-on through a real OpenID provider', () => {
  let database: TestDatabase;
  let provider: TestProvider;
  let auth: KeelAuth;
  let surface: (request: Request) => Promise<Response>;

  beforeAll(async () => {
    database = await freshDatabase();
    provider = await startTestProvider({
      redirectUris: [CALLBACK],
      users: [
        { sub: 'alice', name: 'Alice', groups: ['keel-admins'] },
        { sub: 'bob', name: 'Bob', groups: ['keel-operators', 'staff'] },
        { sub: 'carol', name: 'Carol', groups: ['keel-approvers'] },
        { sub: 'dave', name: 'Dave', groups: ['keel-support'] },
        { sub: 'erin', name: 'Erin', groups: ['keel-viewers'] },
        { sub: 'frank', name: 'Frank', groups: ['keel-viewers', 'keel-approvers'] },
        { sub: 'mallory', name: 'Mallory', groups: ['contractors'] },
        { sub: 'gone', name: 'Gone', groups: ['keel-operators'] },
        { sub: 'ivan', name: 'Ivan', groups: ['keel-operators'] },
      ],
    });
    const errors: SettingError[] = [];
    const signIn = parseSignInSettings(
      {
        KEEL_OIDC_ISSUER: provider.issuer,
        KEEL_OIDC_CLIENT_ID: provider.clientId,
        KEEL_OIDC_CLIENT_SECRET: provider.clientSecret,
        KEEL_OIDC_ROLE_MAP: ROLE_MAP,
        KEEL_OIDC_NAME: 'Test IdP',
        KEEL_LOCAL_SIGN_IN: '0',
      },
      errors,
    );
    expect(errors).toEqual([]);
    auth = createAuth(database.db, { secret: 's'.repeat(64), port: PORT, signInPerMinute: 1000, oidc: signIn.oidc });
    surface = createAuthSurface({
      auth,
      lockout: postgresSignInLockout(database.db),
      allowedOrigins: consoleOrigins({ port: PORT }),
      sso: true,
      localSignIn: signIn.localSignIn,
      recordSsoRefusal: postgresSsoRefusals(database.db),
    });
  });

  afterAll(async () => {
    await provider?.close();
  });

  async function start(keel: CookieJar): Promise<string> {
    const providerUrl = await startSsoSignIn(surface, KEEL, keel);
    const url = new URL(providerUrl);
    expect(url.origin).toBe(provider.issuer);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('nonce')).toBeTruthy();
    return providerUrl;
  }

  /**
   * Follows the provider's redirects and fills its login form; the URL it sends the browser back to Keel with, or null.
   */
  async function loginAtProvider(authorizeUrl: string, login: string): Promise<string | null> {
    const jar = new CookieJar();
    let visit = await visitProvider(authorizeUrl, jar, CALLBACK);
    if (visit.kind === 'login-form') visit = await logInAtProvider(visit, login, jar, CALLBACK);
    return visit.kind === 'returned' ? visit.url : null;
  }

  async function finish(keel: CookieJar, callbackUrl: string): Promise<Response> {
    const response = await surface(new Request(callbackUrl, { headers: { cookie: keel.header() } }));
    keel.take(response);
    return response;
  }

  /** One whole sign-in: where Keel sends the browser after the callback, and the session's user if any. */
  async function signInAs(login: string) {
    const keel = new CookieJar();
    const callbackUrl = await loginAtProvider(await start(keel), login);
    expect(callbackUrl).not.toBeNull();
    const response = await finish(keel, callbackUrl!);
    expect(response.status).toBe(302);
    const session = keel.has('better-auth.session_token')
      ? await auth.api.getSession({ headers: new Headers({ cookie: keel.header() }) })
      : null;
    return { location: response.headers.get('location')!, session, callbackUrl: callbackUrl! };
  }

  const audit = async (where: string, params: unknown[] = []) =>
    (await database.pool.query(`select * from keel.audit_event where ${where} order by id`, params)).rows as Array<
      Record<string, unknown>
    >;

  it('gives each mapped group its role, the highest when several map, under an sso.* username', async () => {
    for (const [login, role] of [
      ['alice', 'admin'],
      ['bob', 'operator'],
      ['carol', 'approver'],
      ['dave', 'support'],
      ['erin', 'viewer'],
      ['frank', 'approver'],
    ] as const) {
      const { location, session } = await signInAs(login);
      expect(location).toBe('/');
      expect(session?.user).toMatchObject({ role, username: `sso.${login}` });
      const signIns = await audit(`action = 'auth.sso_sign_in' and outcome = 'APPLIED' and actor_login = $1`, [
        `sso.${login}`,
      ]);
      expect(signIns).toHaveLength(1);
      expect(signIns[0]).toMatchObject({ actor_role: role, target_kind: 'user' });
      const assigned = await audit(`action = 'user.role_from_claim' and actor_login = $1`, [`sso.${login}`]);
      expect(assigned.map((row) => (row.after as { role: string }).role)).toEqual([role]);
    }
  });

  it('applies a group change at the provider at the next sign-in, and audits the role change', async () => {
    provider.users.get('carol')!.groups = ['keel-viewers'];
    const { session } = await signInAs('carol');
    expect(session?.user).toMatchObject({ role: 'viewer', username: 'sso.carol' });
    const changes = await audit(`action = 'user.role_from_claim' and actor_login = 'sso.carol'`);
    expect(changes.at(-1)).toMatchObject({
      before: { role: 'approver' },
      after: { role: 'viewer', groups: ['keel-viewers'] },
      outcome: 'APPLIED',
    });

    // With no mapped group left, the next sign-in is refused: no default role.
    provider.users.get('carol')!.groups = [];
    const refused = await signInAs('carol');
    expect(refused.session).toBeNull();
    expect(refused.location).toBe(
      '/sign-in?error=NO_MAPPED_GROUP&error_description=None+of+your+groups+at+the+provider+gives+access+to+Keel.',
    );
  });

  it('refuses an unmapped group, creates no user, and audits it', async () => {
    const { location, session } = await signInAs('mallory');
    expect(session).toBeNull();
    expect(new URL(location, KEEL).searchParams.get('error')).toBe('NO_MAPPED_GROUP');
    expect((await database.pool.query(`select 1 from keel."user" where username = 'sso.mallory'`)).rowCount).toBe(0);
    const rows = await audit(`action = 'auth.sso_sign_in' and code = 'NO_MAPPED_GROUP' and target_id = 'mallory'`);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ outcome: 'REFUSED', actor_login: 'anonymous', after: { groups: ['contractors'] } });
  });

  it('refuses a tampered state', async () => {
    const keel = new CookieJar();
    const callbackUrl = new URL((await loginAtProvider(await start(keel), 'ivan'))!);
    callbackUrl.searchParams.set('state', `${callbackUrl.searchParams.get('state')}x`);
    const before = (await audit(`action = 'auth.sso_sign_in' and outcome = 'REFUSED' and target_kind = 'sso_provider'`))
      .length;
    const response = await finish(keel, callbackUrl.href);
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toMatch(/^\/sign-in\?error=/);
    expect(keel.has('better-auth.session_token')).toBe(false);
    const rows = await audit(`action = 'auth.sso_sign_in' and outcome = 'REFUSED' and target_kind = 'sso_provider'`);
    expect(rows.length).toBe(before + 1);
    expect(String(rows.at(-1)!.code)).toMatch(/STATE/);
  });

  it('refuses a response from another issuer', async () => {
    const keel = new CookieJar();
    const callbackUrl = new URL((await loginAtProvider(await start(keel), 'ivan'))!);
    expect(callbackUrl.searchParams.get('iss')).toBe(provider.issuer);
    callbackUrl.searchParams.set('iss', 'http://127.0.0.1:1');
    const response = await finish(keel, callbackUrl.href);
    expect(new URL(response.headers.get('location')!, KEEL).searchParams.get('error')).toBe('issuer_mismatch');
    expect(keel.has('better-auth.session_token')).toBe(false);
    expect(await audit(`action = 'auth.sso_sign_in' and code = 'ISSUER_MISMATCH'`)).toHaveLength(1);
  });

  it('refuses a replayed authorization code, in the same callback or under a fresh state', async () => {
    const first = await signInAs('ivan');
    expect(first.session?.user).toMatchObject({ role: 'operator' });
    const code = new URL(first.callbackUrl).searchParams.get('code')!;

    // The same callback again: its state was spent.
    const again = await finish(new CookieJar(), first.callbackUrl);
    expect(again.headers.get('location')).toMatch(/^\/sign-in\?error=/);

    // The spent code under a fresh, valid state: the provider refuses the exchange.
    const keel = new CookieJar();
    const fresh = new URL(await start(keel));
    const replay = new URL(CALLBACK);
    replay.searchParams.set('code', code);
    replay.searchParams.set('state', fresh.searchParams.get('state')!);
    replay.searchParams.set('iss', provider.issuer);
    const response = await finish(keel, replay.href);
    expect(new URL(response.headers.get('location')!, KEEL).searchParams.get('error')).toBe('invalid_code');
    expect(keel.has('better-auth.session_token')).toBe(false);
    expect(await audit(`action = 'auth.sso_sign_in' and code = 'INVALID_CODE'`)).toHaveLength(1);
  });

  it('lets no account removed at the provider sign in', async () => {
    const first = await signInAs('gone');
    expect(first.session?.user).toMatchObject({ role: 'operator' });
    provider.users.delete('gone');
    const keel = new CookieJar();
    const callbackUrl = await loginAtProvider(await start(keel), 'gone');
    if (callbackUrl !== null) {
      await finish(keel, callbackUrl);
    }
    expect(keel.has('better-auth.session_token')).toBe(false);
  });

  it('keeps a disabled user out', async () => {
    await database.pool.query(`update keel."user" set banned = true where username = 'sso.erin'`);
    const { location, session } = await signInAs('erin');
    expect(session).toBeNull();
    expect(location).toMatch(/^\/sign-in\?error=/);
    expect((await audit(`action = 'auth.sso_sign_in' and outcome = 'REFUSED' and code like 'BANNED%'`)).length).toBe(1);
  });

  it("mounts only the SSO start and this provider's callback beside the password endpoints", async () => {
    for (const [method, path] of [
      ['GET', '/callback/google'],
      ['POST', '/callback/oidc'],
      ['POST', '/sign-in/oauth2'],
      ['POST', '/link-social'],
      ['GET', '/error'],
      ['GET', '/list-accounts'],
      ['POST', '/oauth2/callback/oidc'],
    ] as const) {
      const response = await surface(new Request(`${KEEL}/api/auth${path}`, { method, headers: { origin: KEEL } }));
      expect(response.status, `${method} ${path}`).toBe(404);
    }
    const off = createAuthSurface({
      auth,
      lockout: postgresSignInLockout(database.db),
      allowedOrigins: consoleOrigins({ port: PORT }),
    });
    for (const [method, path] of [
      ['POST', '/sign-in/social'],
      ['GET', '/callback/oidc'],
    ] as const) {
      expect((await off(new Request(`${KEEL}/api/auth${path}`, { method, headers: { origin: KEEL } }))).status).toBe(
        404,
      );
    }
  });

  it('refuses to start a sign-in posted from another origin', async () => {
    const response = await surface(
      new Request(`${KEEL}/api/auth/sign-in/social`, {
        method: 'POST',
        headers: { origin: 'https://evil.example', 'content-type': 'application/json' },
        body: '{}',
      }),
    );
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ code: 'FOREIGN_ORIGIN' });
  });

  it('with KEEL_LOCAL_SIGN_IN=0 takes passwords only from breakglass.* users', async () => {
    expect(
      (
        await createUserAccount(auth, {
          username: 'localadmin',
          name: 'Local',
          role: 'admin',
          password: 'correct-horse',
        })
      ).ok,
    ).toBe(true);
    expect(
      (
        await createUserAccount(auth, {
          username: 'breakglass.root',
          name: 'Root',
          role: 'admin',
          password: 'correct-horse',
          breakGlass: true,
        })
      ).ok,
    ).toBe(true);
    // Only the CLI's --break-glass makes such a name, and no local user takes an SSO name.
    expect(
      await createUserAccount(auth, {
        username: 'breakglass.eve',
        name: 'Eve',
        role: 'admin',
        password: 'correct-horse',
      }),
    ).toMatchObject({ ok: false, error: { code: 'INVALID_USERNAME' } });
    expect(
      await createUserAccount(auth, { username: 'sso.alice', name: 'Alice', role: 'admin', password: 'correct-horse' }),
    ).toMatchObject({ ok: false, error: { code: 'INVALID_USERNAME' } });
    const post = (username: string) =>
      surface(
        new Request(`${KEEL}/api/auth/sign-in/username`, {
          method: 'POST',
          headers: { origin: KEEL, 'content-type': 'application/json' },
          body: JSON.stringify({ username, password: 'correct-horse' }),
        }),
      );
    const refused = await post('localadmin');
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ code: 'LOCAL_SIGN_IN_OFF' });
    expect((await post('breakglass.root')).status).toBe(200);
  });
});
