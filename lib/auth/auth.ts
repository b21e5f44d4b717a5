import { createHash, randomUUID } from 'node:crypto';
import { betterAuth } from 'better-auth';
import { drizzleAdapter } from 'better-auth/adapters/drizzle';
import { nextCookies } from 'better-auth/next-js';
import { admin, username } from 'better-auth/plugins';
import { defaultAc } from 'better-auth/plugins/admin/access';
import { genericOAuth, type GenericOAuthConfig, type GenericOAuthUserInfo } from 'better-auth/plugins/generic-oauth';
import { eq } from 'drizzle-orm';
import {
  groupsFromClaims,
  groupsOverage,
  OIDC_PROVIDER_ID,
  roleFromGroups,
  SSO_USERNAME_PREFIX,
  type OidcSettings,
} from '../config/oidc';
import { auditEvent } from '../db/schema/keel';
import { CLIENT_ADDRESS_HEADER } from '../http/client-address';
import { logger } from '../observability/logger';
import type { Database, DbOrTx } from '../db/client';
import { account, rateLimit, session, user, user as userTable, verification } from '../db/schema/auth';
import { ROLES } from '../domain/roles';
import { REQUEST_ID_HEADER } from '../http/request-id';
import { discoveryUrl, providerMetadata } from './oidc-discovery';
import { consoleOrigins } from '../http/console-origins';

export interface AuthOptions {
  secret: string;
  port: number;
  baseUrl?: string;
  /** Sign-in attempts allowed per client address per minute. */
  signInPerMinute: number;
  /** Single sign-on through this OpenID provider, when configured. */
  oidc?: OidcSettings;
}

export { consoleOrigins };

/**
 * The admin plugin's permissions, minus impersonation for everyone: an admin who
 * could become an approver would break four eyes. Only admins hold the rest, and
 * Keel reaches them from server code only (lib/auth/http-surface.ts mounts none).
 */
const adminPermissions = defaultAc.newRole({
  user: ['create', 'list', 'set-role', 'ban', 'delete', 'set-password', 'set-email', 'set-phone', 'get', 'update'],
  session: ['list', 'revoke', 'delete'],
});
const noPermissions = defaultAc.newRole({ user: [], session: [] });
const roles = Object.fromEntries(ROLES.map((role) => [role, role === 'admin' ? adminPermissions : noPermissions]));

/**
 * better-auth's messages go to Keel's log, first line only and never their
 * arguments: those carried query parameters (session tokens) during an outage.
 */
const authLogger = {
  level: 'warn' as const,
  log(level: 'debug' | 'info' | 'warn' | 'error', message: string) {
    logger[level]({ source: 'better-auth' }, String(message).split('\n', 1)[0]!.slice(0, 300));
  },
};

/**
 * Sign-in over better-auth: username and password (scrypt-hashed), sessions in
 * Postgres, roles from the admin plugin. Nobody signs up: users are made by an
 * admin or the CLI.
 */
export function createAuth(db: Database, options: AuthOptions) {
  const secure = options.baseUrl?.startsWith('https://') ?? false;
  const oidc = options.oidc;
  return betterAuth({
    appName: 'Keel',
    secret: options.secret,
    // Without KEEL_BASE_URL the console answers on localhost and 127.0.0.1 at its port.
    baseURL: options.baseUrl ?? {
      allowedHosts: [`localhost:${options.port}`, `127.0.0.1:${options.port}`],
      fallback: `http://localhost:${options.port}`,
      protocol: 'http',
    },
    trustedOrigins: consoleOrigins(options),
    logger: authLogger,
    database: drizzleAdapter(db, {
      provider: 'pg',
      schema: { user, session, account, verification, rateLimit },
      transaction: true,
    }),
    emailAndPassword: { enabled: true, disableSignUp: true, minPasswordLength: 8, maxPasswordLength: 128 },
    session: {
      expiresIn: 60 * 60 * 12,
      updateAge: 60 * 60,
    },
    // On by default only in production; a console's sign-in is limited everywhere.
    rateLimit: {
      enabled: true,
      storage: 'database',
      window: 60,
      max: 300,
      customRules: {
        '/sign-in/*': { window: 60, max: options.signInPerMinute },
      },
    },
    advanced: {
      useSecureCookies: secure,
      // Keel's server (lib/cli/server.mjs) writes the address it derived from the socket
      // and KEEL_TRUSTED_PROXIES into this header, replacing any copy a client sent.
      ipAddress: { ipAddressHeaders: [CLIENT_ADDRESS_HEADER] },
    },
    telemetry: { enabled: false },
    // A provider's identity never joins a local user, even one with the same email.
    account: { accountLinking: { enabled: false } },
    // Refused callbacks land back on the sign-in page, which explains the `error` code.
    onAPIError: { errorURL: '/sign-in' },
    user: oidc ? { validateUserInfo: (data, context) => gateSsoUser(db, oidc, data, requestIdOf(context)) } : undefined,
    databaseHooks: oidc
      ? {
          session: {
            create: {
              after: async (created, context) => {
                if (context?.path !== '/callback/:id') return;
                await auditSsoSignIn(db, created.userId, requestIdOf(context));
              },
            },
          },
        }
      : undefined,
    plugins: [
      admin({ defaultRole: 'viewer', adminRoles: ['admin'], roles }),
      username({ minUsernameLength: 2, maxUsernameLength: 64 }),
      ...(oidc ? [genericOAuth({ config: [ssoProviderConfig(oidc)] })] : []),
      nextCookies(),
    ],
  });
}

export type KeelAuth = ReturnType<typeof createAuth>;

/** `sso.` + the provider's preferred_username (else its subject), folded to Keel's username alphabet. */
export function ssoUsername(claims: Record<string, unknown>): string {
  const base =
    typeof claims.preferred_username === 'string' && claims.preferred_username
      ? claims.preferred_username
      : String(claims.sub ?? '');
  const folded = base
    .toLowerCase()
    .replace(/@.*$/, '')
    .replace(/[^a-z0-9_.]/g, '_')
    .slice(0, 60);
  return `${SSO_USERNAME_PREFIX}${folded || 'user'}`;
}

/** A subject's stable, non-routable email: better-auth needs one, and it must not match a local user's. */
function ssoEmail(issuer: string, subject: string): string {
  return `${createHash('sha256').update(`${issuer}\n${subject}`).digest('hex').slice(0, 32)}@sso.keel.invalid`;
}

function ssoProviderConfig(oidc: OidcSettings) {
  return {
    providerId: OIDC_PROVIDER_ID,
    name: oidc.name,
    discoveryUrl: discoveryUrl(oidc.issuer),
    clientId: oidc.clientId,
    clientSecret: oidc.clientSecret,
    scopes: oidc.scopes,
    pkce: true,
    // ID tokens are checked against the discovered issuer, the JWKS and the nonce sent.
    requireIdTokenVerification: true,
    getUserInfo: (tokens: SsoTokens) => ssoProfile(oidc, tokens),
    // Keel builds the provider's logout URL itself (signOutSession).
    disableProviderLogout: true,
    mapProfileToUser: (profile: Record<string, unknown>) => ({
      email: ssoEmail(oidc.issuer, String(profile.sub ?? profile.id ?? '')),
      emailVerified: true,
      name: typeof profile.name === 'string' && profile.name ? profile.name : ssoUsername(profile),
      username: ssoUsername(profile),
    }),
  };
}

type SsoTokens = Parameters<NonNullable<GenericOAuthConfig['getUserInfo']>>[0];

/** The claims of a JWT, or null when it is not one. Only for an ID token better-auth has verified already. */
function jwtClaims(token: string): Record<string, unknown> | null {
  try {
    const claims: unknown = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8'));
    return claims !== null && typeof claims === 'object' && !Array.isArray(claims)
      ? (claims as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** The userinfo endpoint's claims; {} when the provider has none; null when it fails. */
async function userInfoClaims(
  oidc: OidcSettings,
  accessToken: string | undefined,
): Promise<Record<string, unknown> | null> {
  const metadata = await providerMetadata(oidc.issuer);
  const endpoint = metadata.ok ? metadata.value.userinfo_endpoint : undefined;
  if (!endpoint || !accessToken) return {};
  try {
    const response = await fetch(endpoint, {
      headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' },
      signal: AbortSignal.timeout(10_000),
    });
    if (!response.ok) {
      logger.warn({ source: 'sso', status: response.status }, 'the provider refused the userinfo request');
      return null;
    }
    const claims: unknown = await response.json();
    return claims !== null && typeof claims === 'object' && !Array.isArray(claims)
      ? (claims as Record<string, unknown>)
      : null;
  } catch {
    logger.warn({ source: 'sso' }, "the provider's userinfo endpoint did not answer");
    return null;
  }
}

/**
 * The profile a sign-in is decided on. better-auth has verified the ID token (keys,
 * issuer, audience, nonce) before this runs. When the token carries the groups claim, or
 * says it left the groups out (groupsOverage), its claims decide alone; otherwise the
 * userinfo endpoint's claims are laid over them, for providers that send groups only
 * there. (better-auth by itself reads the token only when it carries an email, so a token
 * without one would have lost its groups.)
 */
async function ssoProfile(oidc: OidcSettings, tokens: SsoTokens): Promise<GenericOAuthUserInfo | null> {
  const fromToken = tokens.idToken ? jwtClaims(tokens.idToken) : {};
  if (fromToken === null) return null;
  let claims = fromToken;
  if (fromToken[oidc.groupsClaim] === undefined && !groupsOverage(fromToken, oidc.groupsClaim)) {
    const fromEndpoint = await userInfoClaims(oidc, tokens.accessToken);
    if (fromEndpoint === null) return null;
    // OpenID Connect Core 5.3.2: userinfo about another subject is not this user's.
    if (fromToken.sub !== undefined && fromEndpoint.sub !== undefined && fromEndpoint.sub !== fromToken.sub)
      return null;
    claims = { ...fromToken, ...fromEndpoint };
  }
  if (typeof claims.sub !== 'string' || claims.sub === '') return null;
  return { ...claims, id: claims.sub, emailVerified: false };
}

/** Where the provider sends the browser back after ending its session: register `<console origin>` + this path. */
export const SIGNED_OUT_PATH = '/sign-in';

export type SignOutOptions = Pick<AuthOptions, 'port' | 'baseUrl' | 'oidc'>;

/**
 * Ends the caller's Keel session. For a single sign-on user whose provider offers
 * RP-initiated logout (an end_session_endpoint), also returns the provider's URL that ends
 * the provider's session, for the browser to visit: with the user's last ID token as
 * id_token_hint, and SIGNED_OUT_PATH on the console's origin as post_logout_redirect_uri
 * (the provider sends the browser back there). Otherwise null: the provider's session, if
 * any, outlives Keel's. (better-auth's own logout URL needs a fixed baseURL, which Keel
 * leaves unset without KEEL_BASE_URL to answer on localhost and 127.0.0.1 alike.)
 */
export async function signOutSession(
  auth: KeelAuth,
  headers: Headers,
  options: SignOutOptions,
): Promise<{ providerSignOutUrl: string | null }> {
  const idToken = options.oidc ? await ssoIdToken(auth, headers) : null;
  await auth.api.signOut({ headers });
  if (!options.oidc || !idToken) return { providerSignOutUrl: null };
  const metadata = await providerMetadata(options.oidc.issuer);
  if (!metadata.ok || !metadata.value.end_session_endpoint) return { providerSignOutUrl: null };
  const url = new URL(metadata.value.end_session_endpoint);
  url.searchParams.set('id_token_hint', idToken);
  url.searchParams.set('post_logout_redirect_uri', new URL(SIGNED_OUT_PATH, consoleOrigin(options, headers)).href);
  url.searchParams.set('client_id', options.oidc.clientId);
  return { providerSignOutUrl: url.href };
}

/** The ID token of the signed-in user's provider account, if the session is a single sign-on user's. */
async function ssoIdToken(auth: KeelAuth, headers: Headers): Promise<string | null> {
  const session = await auth.api.getSession({ headers });
  if (!session) return null;
  const accounts = await (await auth.$context).internalAdapter.findAccounts(session.user.id);
  return accounts.find((account) => account.providerId === OIDC_PROVIDER_ID)?.idToken ?? null;
}

/** The console's origin this request came to: KEEL_BASE_URL's, else whichever of its own origins the Host names. */
function consoleOrigin(options: Pick<AuthOptions, 'port' | 'baseUrl'>, headers: Headers): string {
  if (options.baseUrl) return new URL(options.baseUrl).origin;
  const origins = consoleOrigins(options);
  const asked = `http://${headers.get('host') ?? ''}`;
  return origins.includes(asked) ? asked : origins[0]!;
}

/** The request id Keel's server gave this request (lib/http/request-id.ts), so audit rows name it. */
function requestIdOf(context: unknown): string {
  const headers = context as { headers?: Headers; request?: Request } | null | undefined;
  const id = headers?.headers?.get?.(REQUEST_ID_HEADER) ?? headers?.request?.headers.get(REQUEST_ID_HEADER);
  return id && id.length <= 128 ? id : randomUUID();
}

const SSO_ANONYMOUS = { actorId: null, actorLogin: 'anonymous', actorRole: 'anonymous' } as const;

interface GateInput {
  user: Record<string, unknown>;
  source: { action: string; method: string; oauth?: { providerId: string; profile?: Record<string, unknown> } };
}

/**
 * Runs when an SSO identity is about to become a user and at every later sign-in:
 * the role comes from the groups claim through KEEL_OIDC_ROLE_MAP, or the sign-in
 * is refused. A changed role is written before the session exists, and audited.
 */
async function gateSsoUser(db: Database, oidc: OidcSettings, { user, source }: GateInput, requestId: string) {
  if (source.method !== 'oauth') return undefined;
  if (source.oauth?.providerId !== OIDC_PROVIDER_ID || source.action === 'link-account') {
    return { error: 'SSO_LINK_REFUSED', errorDescription: 'Accounts are not linked to a provider identity.' };
  }
  const claims = source.oauth.profile ?? {};
  const subject = String(claims.sub ?? '');
  if (groupsOverage(claims, oidc.groupsClaim)) {
    // Audited by the callback's handler (lib/auth/http-surface.ts) with this code.
    return {
      error: 'GROUPS_OVERAGE',
      errorDescription: 'The provider sent no groups: you are in more groups than its tokens carry.',
    };
  }
  const groups = groupsFromClaims(claims, oidc.groupsClaim);
  const role = roleFromGroups(groups, oidc.roleMap);
  if (!role) {
    await db.insert(auditEvent).values({
      ...SSO_ANONYMOUS,
      action: 'auth.sso_sign_in',
      targetKind: 'sso_subject',
      targetId: subject,
      after: { username: ssoUsername(claims), groups: groups.slice(0, 50) },
      outcome: 'REFUSED',
      code: 'NO_MAPPED_GROUP',
      requestId,
    });
    return { error: 'NO_MAPPED_GROUP', errorDescription: 'None of your groups at the provider gives access to Keel.' };
  }
  if (source.action === 'create-user') {
    // better-auth creates the user from this very object, after the admin plugin's default role.
    user.role = role;
    await auditRoleFromClaim(db, requestId, {
      userId: null,
      username: String(user.username ?? ssoUsername(claims)),
      before: null,
      role,
      groups,
    });
    return undefined;
  }
  const userId = String(user.id ?? '');
  // The change and its audit event commit together; the row lock orders two sign-ins of one user.
  await db.transaction(async (tx) => {
    const [current] = await tx
      .select({ role: userTable.role, username: userTable.username })
      .from(userTable)
      .where(eq(userTable.id, userId))
      .for('update');
    if (!current || current.role === role) return;
    await tx.update(userTable).set({ role, updatedAt: new Date() }).where(eq(userTable.id, userId));
    await auditRoleFromClaim(tx, requestId, {
      userId,
      username: current.username ?? userId,
      before: current.role,
      role,
      groups,
    });
  });
  return undefined;
}

async function auditRoleFromClaim(
  db: DbOrTx,
  requestId: string,
  change: { userId: string | null; username: string; before: string | null; role: string; groups: string[] },
) {
  await db.insert(auditEvent).values({
    actorId: change.userId,
    actorLogin: change.username,
    actorRole: change.role,
    action: 'user.role_from_claim',
    targetKind: 'user',
    targetId: change.userId ?? change.username,
    before: change.before === null ? null : { role: change.before },
    after: { role: change.role, groups: change.groups.slice(0, 50) },
    outcome: 'APPLIED',
    requestId,
  });
}

async function auditSsoSignIn(db: Database, userId: string, requestId: string) {
  const [row] = await db
    .select({ role: userTable.role, username: userTable.username })
    .from(userTable)
    .where(eq(userTable.id, userId));
  await db.insert(auditEvent).values({
    actorId: userId,
    actorLogin: row?.username ?? userId,
    actorRole: row?.role ?? 'viewer',
    action: 'auth.sso_sign_in',
    targetKind: 'user',
    targetId: userId,
    outcome: 'APPLIED',
    requestId,
  });
}
