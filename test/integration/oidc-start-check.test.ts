import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkProviderAtStart, discoverProvider } from '../../lib/auth/oidc-discovery';
import { freePort } from '../../lib/db/embedded';
import { startTestProvider, type TestProvider } from '../support/oidc-provider';

/** Runs a Keel command to its end: its exit code and what it printed. */
function run(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string; seconds: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) =>
    child.once('close', (code) => resolve({ code, stdout, stderr, seconds: (performance.now() - started) / 1000 })),
  );
}

const KEEL = ['--import', 'tsx', '--conditions=react-server', 'bin/keel.ts', 'start'];

describe("single sign-on's provider, checked at start against a real OpenID provider", () => {
  let provider: TestProvider;
  /** The same provider under another name for its host: not its issuer. */
  let wrongIssuer: string;

  beforeAll(async () => {
    provider = await startTestProvider({ redirectUris: ['http://localhost:3995/api/auth/callback/oidc'], users: [] });
    wrongIssuer = provider.issuer.replace('127.0.0.1', 'localhost');
  });
  afterAll(async () => {
    await provider?.close();
  });

  const ssoEnv = (issuer: string) => ({
    KEEL_OIDC_ISSUER: issuer,
    KEEL_OIDC_CLIENT_ID: provider.clientId,
    KEEL_OIDC_CLIENT_SECRET: provider.clientSecret,
    KEEL_OIDC_ROLE_MAP: 'keel-admins=admin',
  });

  it('takes the issuer the discovery document names, with its endpoints', async () => {
    const found = await discoverProvider(provider.issuer);
    expect(found).toMatchObject({
      ok: true,
      value: {
        issuer: provider.issuer,
        end_session_endpoint: `${provider.issuer}/session/end`,
        userinfo_endpoint: `${provider.issuer}/me`,
      },
    });
  });

  it('refuses another name for the issuer, a path that is no issuer, and tells which', async () => {
    expect(await discoverProvider(wrongIssuer)).toEqual({
      ok: false,
      error: {
        code: 'OIDC_ISSUER_MISMATCH',
        message:
          `KEEL_OIDC_ISSUER=${wrongIssuer}, but the provider's discovery document ` +
          `(${wrongIssuer}/.well-known/openid-configuration) names its issuer ${provider.issuer}; ` +
          'set KEEL_OIDC_ISSUER to exactly that',
      },
    });
    expect(await discoverProvider(`${provider.issuer}/`)).toMatchObject({
      ok: false,
      error: { code: 'OIDC_ISSUER_MISMATCH' },
    });
    expect(await discoverProvider(`${provider.issuer}/tenant/v2.0`)).toEqual({
      ok: false,
      error: {
        code: 'OIDC_DISCOVERY_INVALID',
        message:
          `KEEL_OIDC_ISSUER=${provider.issuer}/tenant/v2.0 is not an OpenID provider's issuer: ` +
          `${provider.issuer}/tenant/v2.0/.well-known/openid-configuration answered HTTP 404`,
      },
    });
  });

  it('starts on with a warning when the provider does not answer, and refuses a wrong issuer', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const lines: string[] = [];
    const oidc = {
      issuer: closed,
      clientId: 'keel',
      clientSecret: 'x',
      scopes: ['openid'],
      groupsClaim: 'groups',
      roleMap: new Map(),
      name: 'IdP',
    };
    expect(await checkProviderAtStart(oidc, (line) => lines.push(line))).toBeNull();
    expect(lines).toEqual([
      expect.stringMatching(
        new RegExp(
          `^single sign-on: ${closed}/\\.well-known/openid-configuration did not answer \\(.*\\); ` +
            'checked again at the first sign-in$',
        ),
      ),
    ]);
    expect(await checkProviderAtStart({ ...oidc, issuer: wrongIssuer }, () => {})).toMatch(
      /^\[keel\] refusing to start \(OIDC_ISSUER_MISMATCH\): /,
    );
  });

  it('`keel start` with a wrong issuer stops with one line before touching the database', async () => {
    // Nothing listens on the database's port: had the start reached it, it would fail otherwise.
    const result = await run(KEEL, {
      ...ssoEnv(wrongIssuer),
      DATABASE_URL: `postgres://keel@127.0.0.1:${await freePort()}/keel`,
      KEEL_CHECKPOINT_KEY: 'ab'.repeat(32),
      PORT: String(await freePort()),
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `[keel] refusing to start (OIDC_ISSUER_MISMATCH): KEEL_OIDC_ISSUER=${wrongIssuer}, ` +
        `but the provider's discovery document (${wrongIssuer}/.well-known/openid-configuration) ` +
        `names its issuer ${provider.issuer}; set KEEL_OIDC_ISSUER to exactly that\n`,
    );
    expect(result.stdout).not.toMatch(/database|PostgreSQL/);
  });

  it('the HTTP server run on its own refuses a wrong issuer too', async () => {
    const result = await run(['lib/cli/server.mjs', 'start', String(await freePort())], {
      ...ssoEnv(`${provider.issuer}/tenant/v2.0`),
      DATABASE_URL: `postgres://keel@127.0.0.1:${await freePort()}/keel`,
      KEEL_CHECKPOINT_KEY: 'ab'.repeat(32),
      KEEL_LAUNCHED: '',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      new RegExp(
        String.raw`^\[keel\] refusing to start \(OIDC_DISCOVERY_INVALID\): KEEL_OIDC_ISSUER=.*\/tenant\/v2\.0 ` +
          String.raw`is not an OpenID provider's issuer: .* answered HTTP 404\n$`,
      ),
    );
  });
});
