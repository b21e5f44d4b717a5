import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresSignInLockout } from '../../lib/adapters/sign-in-lockout';
import { postgresSsoRefusals } from '../../lib/adapters/sso-audit';
import { consoleOrigins, createAuth, signOutSession, SIGNED_OUT_PATH, type KeelAuth } from '../../lib/auth/auth';
import { createAuthSurface } from '../../lib/auth/http-surface';
import { discoverProvider } from '../../lib/auth/oidc-discovery';
import { createUserAccount } from '../../lib/auth/users';
import { OIDC_CALLBACK_PATH, parseSignInSettings } from '../../lib/config/oidc';
import type { SettingError } from '../../lib/config/settings';
import { freshDatabase, type TestDatabase } from '../support/database';
import { CookieJar, formFields, logInAtProvider, startSsoSignIn, visitProvider } from '../support/oidc-flow';
import { startTestProvider, type TestProvider, type TestProviderOptions } from '../support/oidc-provider';

const PORT = 3994;
const KEEL = `http://localhost:${PORT}`;
const CALLBACK = `${KEEL}${OIDC_CALLBACK_PATH}`;
const SIGNED_OUT = `${KEEL}${SIGNED_OUT_PATH}`;
const ROLE_MAP = 'keel-operators=operator,keel-viewers=viewer';

const jwtClaims = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;

/** Keel (better-auth and its HTTP surface, on a database of its own) signing in through a real provider. */
async function keelWithProvider(options: Pick<TestProviderOptions, 'claimsInIdToken' | 'endSession'>) {
  const database: TestDatabase = await freshDatabase();
  const provider: TestProvider = await startTestProvider({
    ...options,
    redirectUris: [CALLBACK],
    postLogoutRedirectUris: [SIGNED_OUT],
    users: [
      { sub: 'olga', name: 'Olga', groups: ['keel-operators'] },
      { sub: 'vic', name: 'Vic', groups: ['keel-viewers', 'staff'] },
      { sub: 'greta', name: 'Greta', groups: [], groupsOverage: true },
    ],
  });
  const errors: SettingError[] = [];
  const settings = parseSignInSettings(
    {
      KEEL_OIDC_ISSUER: provider.issuer,
      KEEL_OIDC_CLIENT_ID: provider.clientId,
      KEEL_OIDC_CLIENT_SECRET: provider.clientSecret,
      KEEL_OIDC_ROLE_MAP: ROLE_MAP,
    },
    errors,
  );
  expect(errors).toEqual([]);
  const auth: KeelAuth = createAuth(database.db, {
    secret: 's'.repeat(64),
    port: PORT,
    signInPerMinute: 1000,
    oidc: settings.oidc,
  });
  const surface = createAuthSurface({
    auth,
    lockout: postgresSignInLockout(database.db),
    allowedOrigins: consoleOrigins({ port: PORT }),
    sso: true,
    recordSsoRefusal: postgresSsoRefusals(database.db),
  });

  /** Keel's start of an SSO sign-in: the provider URL it sends the browser to. */
  const startSignIn = (keel: CookieJar) => startSsoSignIn(surface, KEEL, keel);

  /**
   * A whole sign-in in one browser (`browser`: its cookies at the provider): where Keel sends it, and Keel's cookies.
   */
  async function signIn(login: string, browser = new CookieJar()) {
    const keel = new CookieJar();
    let visit = await visitProvider(await startSignIn(keel), browser, CALLBACK);
    if (visit.kind === 'login-form') visit = await logInAtProvider(visit, login, browser, CALLBACK);
    if (visit.kind !== 'returned') throw new Error(`the provider did not send the browser back (${visit.kind})`);
    const response = await surface(new Request(visit.url, { headers: { cookie: keel.header() } }));
    keel.take(response);
    expect(response.status).toBe(302);
    const session = await auth.api.getSession({ headers: new Headers({ cookie: keel.header() }) });
    return { keel, location: response.headers.get('location')!, session };
  }

  const audit = async (where: string, params: unknown[] = []) =>
    (await database.pool.query(`select * from keel.audit_event where ${where} order by id`, params)).rows as Array<
      Record<string, unknown>
    >;

  return { database, provider, auth, signOutOptions: { port: PORT, oidc: settings.oidc }, startSignIn, signIn, audit };
}

describe.each([
  { where: 'from the userinfo endpoint', claimsInIdToken: false },
  { where: 'in the ID token (as Entra ID sends them)', claimsInIdToken: true },
])('single sign-on with the groups $where', ({ claimsInIdToken }) => {
  let keel: Awaited<ReturnType<typeof keelWithProvider>>;
  beforeAll(async () => {
    keel = await keelWithProvider({ claimsInIdToken });
  });
  afterAll(async () => {
    await keel?.provider.close();
  });

  it('gives the mapped role', async () => {
    const { location, session } = await keel.signIn('vic');
    expect(location).toBe('/');
    expect(session?.user).toMatchObject({ role: 'viewer', username: 'sso.vic' });
  });

  it('refuses a token that left the groups out for too many (groups overage), creates no user, audits it', async () => {
    const { location, session } = await keel.signIn('greta');
    expect(session).toBeNull();
    const refusal = new URL(location, KEEL).searchParams;
    expect(refusal.get('error')).toBe('GROUPS_OVERAGE');
    expect(refusal.get('error_description')).toBe(
      'The provider sent no groups: you are in more groups than its tokens carry.',
    );
    expect((await keel.database.pool.query(`select 1 from keel."user" where username = 'sso.greta'`)).rowCount).toBe(0);
    expect(await keel.audit(`action = 'auth.sso_sign_in' and code = 'GROUPS_OVERAGE'`)).toEqual([
      expect.objectContaining({ outcome: 'REFUSED' }),
    ]);
    // Not taken for a user in no mapped group: that is another refusal, with another message.
    expect(await keel.audit(`code = 'NO_MAPPED_GROUP'`)).toEqual([]);
  });
});

describe('sign-out of a single sign-on user (RP-initiated logout)', () => {
  let keel: Awaited<ReturnType<typeof keelWithProvider>>;
  beforeAll(async () => {
    keel = await keelWithProvider({});
  });
  afterAll(async () => {
    await keel?.provider.close();
  });

  it('ends the session at the provider too, which sends the browser back to the sign-in page', async () => {
    const browser = new CookieJar();
    const signedIn = await keel.signIn('olga', browser);
    expect(signedIn.session?.user).toMatchObject({ role: 'operator' });
    // While the provider's session lasts, a sign-in from this browser asks nothing at the provider.
    expect((await visitProvider(await keel.startSignIn(new CookieJar()), browser, CALLBACK)).kind).toBe('returned');

    const { providerSignOutUrl } = await signOutSession(
      keel.auth,
      new Headers({ cookie: signedIn.keel.header(), host: `localhost:${PORT}` }),
      keel.signOutOptions,
    );
    expect(await keel.auth.api.getSession({ headers: new Headers({ cookie: signedIn.keel.header() }) })).toBeNull();
    const metadata = await discoverProvider(keel.provider.issuer);
    expect(metadata.ok && metadata.value.end_session_endpoint).toBeTruthy();
    const url = new URL(providerSignOutUrl!);
    expect(`${url.origin}${url.pathname}`).toBe(metadata.ok ? metadata.value.end_session_endpoint : '');
    expect(url.searchParams.get('post_logout_redirect_uri')).toBe(SIGNED_OUT);
    expect(url.searchParams.get('client_id')).toBe(keel.provider.clientId);
    expect(jwtClaims(url.searchParams.get('id_token_hint')!)).toMatchObject({
      sub: 'olga',
      aud: keel.provider.clientId,
      iss: keel.provider.issuer,
    });

    // The provider asks the user to confirm, then sends the browser to Keel's sign-in page.
    const confirm = await visitProvider(providerSignOutUrl!, browser, SIGNED_OUT);
    if (confirm.kind !== 'other') throw new Error(`expected the provider's sign-out page, got ${confirm.kind}`);
    const form = formFields(confirm.html, 'op.logoutForm');
    const back = await visitProvider(new URL(form.action, confirm.url).href, browser, SIGNED_OUT, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...form.fields, logout: 'yes' }).toString(),
    });
    expect(back).toEqual({ kind: 'returned', url: SIGNED_OUT });

    // The provider's session is over: the next sign-in from this browser asks for the login again.
    expect((await visitProvider(await keel.startSignIn(new CookieJar()), browser, CALLBACK)).kind).toBe('login-form');
  });

  it('leaves the provider alone for a password user', async () => {
    expect(
      (await createUserAccount(keel.auth, { username: 'pat', name: 'Pat', role: 'viewer', password: 'correct-horse' }))
        .ok,
    ).toBe(true);
    const signedIn = await keel.auth.api.signInUsername({
      body: { username: 'pat', password: 'correct-horse' },
      asResponse: true,
    });
    const cookie = signedIn.headers
      .getSetCookie()
      .map((line) => line.split(';', 1)[0])
      .join('; ');
    expect(
      await signOutSession(keel.auth, new Headers({ cookie, host: `localhost:${PORT}` }), keel.signOutOptions),
    ).toEqual({ providerSignOutUrl: null });
    expect(await keel.auth.api.getSession({ headers: new Headers({ cookie }) })).toBeNull();
  });
});

describe('sign-out through a provider without RP-initiated logout', () => {
  let keel: Awaited<ReturnType<typeof keelWithProvider>>;
  beforeAll(async () => {
    keel = await keelWithProvider({ endSession: false });
  });
  afterAll(async () => {
    await keel?.provider.close();
  });

  it('ends the Keel session only', async () => {
    const metadata = await discoverProvider(keel.provider.issuer);
    expect(metadata.ok && metadata.value.end_session_endpoint).toBeUndefined();
    const signedIn = await keel.signIn('olga');
    expect(signedIn.session?.user).toMatchObject({ role: 'operator' });
    expect(
      await signOutSession(
        keel.auth,
        new Headers({ cookie: signedIn.keel.header(), host: `localhost:${PORT}` }),
        keel.signOutOptions,
      ),
    ).toEqual({ providerSignOutUrl: null });
    expect(await keel.auth.api.getSession({ headers: new Headers({ cookie: signedIn.keel.header() }) })).toBeNull();
  });
});
