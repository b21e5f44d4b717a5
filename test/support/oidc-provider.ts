import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/** A user of the test provider: its login (the subject) and the groups its tokens carry. */
export interface ProviderUser {
  sub: string;
  name: string;
  groups: string[];
  /** Too many groups for a token: they are left out, and `_claim_names` points elsewhere, as Entra ID does. */
  groupsOverage?: boolean;
}

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The provider's users, by login; change a user's groups or delete it between sign-ins. */
  users: Map<string, ProviderUser>;
  close(): Promise<void>;
}

export interface TestProviderOptions {
  /** Loopback port; 0 picks a free one. */
  port?: number;
  /** Redirect URIs the client may use (Keel's callback, exactly). */
  redirectUris: string[];
  users: ProviderUser[];
  clientId?: string;
  clientSecret?: string;
  /** Where the provider may send the browser after ending its session (RP-initiated logout). */
  postLogoutRedirectUris?: string[];
  /**
   * Put the scopes' claims (groups included) in the ID token too,
   * as Entra ID does; by default they come only from userinfo.
   */
  claimsInIdToken?: boolean;
  /** RP-initiated logout (an end_session_endpoint); on unless false. */
  endSession?: boolean;
}

/**
 * A real OpenID provider (`oidc-provider`) on 127.0.0.1: discovery, JWKS, the
 * authorization endpoint with its login form (any password; the login is the
 * subject), PKCE required, `iss` in the authorization response, and a `groups`
 * scope and claim. Consent is pre-granted, as a company provider does for its own apps.
 */
export async function startTestProvider(options: TestProviderOptions): Promise<TestProvider> {
  const server: Server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const issuer = `http://127.0.0.1:${port}`;
  const clientId = options.clientId ?? 'keel';
  const clientSecret = options.clientSecret ?? 'keel-test-client-secret-0123456789abcdef';
  const users = new Map(options.users.map((u) => [u.sub, { ...u, groups: [...u.groups] }]));

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        post_logout_redirect_uris: options.postLogoutRedirectUris ?? [],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    async findAccount(_ctx: unknown, sub: string) {
      const user = users.get(sub);
      if (!user) return undefined;
      return {
        accountId: sub,
        // Read at token time, so a group change applies to the next sign-in.
        async claims() {
          const current = users.get(sub);
          if (current?.groupsOverage) {
            const overage = {
              _claim_names: { groups: 'src1' },
              _claim_sources: { src1: { endpoint: `https://graph.microsoft.com/v1.0/users/${sub}/getMemberObjects` } },
            };
            return { sub, name: current.name, preferred_username: sub, ...overage };
          }
          return { sub, name: current?.name, preferred_username: sub, groups: current ? [...current.groups] : [] };
        },
      };
    },
    claims: {
      openid: ['sub'],
      profile: ['name', 'preferred_username'],
      email: ['email', 'email_verified'],
      groups: ['groups'],
    },
    scopes: ['openid', 'profile', 'email', 'groups'],
    pkce: { methods: ['S256'], required: () => true },
    conformIdTokenClaims: options.claimsInIdToken !== true,
    features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: options.endSession !== false } },
    cookies: { keys: ['keel-test-provider-cookie-key'] },
    // biome-ignore lint/suspicious/noExplicitAny: oidc-provider ships no types for its Koa context
    async loadExistingGrant(ctx: any) {
      const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session!.grantIdFor(ctx.oidc.client!.clientId);
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client!.clientId,
        accountId: ctx.oidc.session!.accountId,
      });
      grant.addOIDCScope('openid profile email groups');
      await grant.save();
      return grant;
    },
  });
  server.on('request', provider.callback());

  return {
    issuer,
    clientId,
    clientSecret,
    users,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
