import { startTestProvider } from '../test/support/oidc-provider';
import { E2E_OIDC } from './support/oidc';

/**
 * Starts the OpenID provider for e2e/sso.spec.ts on its fixed loopback port. Playwright
 * starts the web server first; a provider that is not up yet only warns at Keel's start,
 * and Keel discovers it at the first SSO sign-in (better-auth retries discovery then), so
 * the provider need only be up by the tests.
 * The returned function is the global teardown: it stops the provider.
 */
export default async function globalSetup(): Promise<() => Promise<void>> {
  const keelPort = Number(process.env.KEEL_E2E_PORT ?? 3100);
  const provider = await startTestProvider({
    port: E2E_OIDC.port,
    clientId: E2E_OIDC.clientId,
    clientSecret: E2E_OIDC.clientSecret,
    redirectUris: [
      `http://localhost:${keelPort}/api/auth/callback/oidc`,
      `http://127.0.0.1:${keelPort}/api/auth/callback/oidc`,
    ],
    postLogoutRedirectUris: [`http://localhost:${keelPort}/sign-in`, `http://127.0.0.1:${keelPort}/sign-in`],
    users: E2E_OIDC.users,
  });
  return () => provider.close();
}
