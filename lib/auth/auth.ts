import { createHash, randomUUID } from 'node:crypto';
import { betterAuth } from 'better-auth';
import { drizzleAdapter } from 'better-auth/adapters/drizzle';
import { nextCookies } from 'better-auth/next-js';
import { admin, username } from 'better-auth/plugins';
import { defaultAc } from 'better-auth/plugins/admin/access';
import { genericOAuth } from 'better-auth/plugins/generic-oauth';
import { eq } from 'drizzle-orm';
import { groupsFromClaims, OIDC_PROVIDER_ID, roleFromGroups, SSO_USERNAME_PREFIX, type OidcSettings } from '../config/oidc';
import { auditEvent } from '../db/schema/keel';
import { CLIENT_ADDRESS_HEADER } from '../http/client-address';
import { logger } from '../server/logger';
import type { Database, DbOrTx } from '../db/client';
import { account, rateLimit, session, user, user as userTable, verification } from '../db/schema/auth';
import { ROLES } from '../domain/roles';
import { REQUEST_ID_HEADER } from '../http/request-id';
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
  const base = typeof claims.preferred_username === 'string' && claims.preferred_username ? claims.preferred_username : String(claims.sub ?? '');
  const folded = base.toLowerCase().replace(/@.*$/, '').replace(/[^a-z0-9_.]/g, '_').slice(0, 60);
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
    discoveryUrl: `${oidc.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`,
    clientId: oidc.clientId,
    clientSecret: oidc.clientSecret,
    scopes: oidc.scopes,
    pkce: true,
    // ID tokens are checked against the discovered issuer, the JWKS and the nonce sent.
    requireIdTokenVerification: true,
    mapProfileToUser: (profile: Record<string, unknown>) => ({
      email: ssoEmail(oidc.issuer, String(profile.sub ?? profile.id ?? '')),
      emailVerified: true,
      name: typeof profile.name === 'string' && profile.name ? profile.name : ssoUsername(profile),
      username: ssoUsername(profile),
    }),
  };
}

/** The request id Keel's server gave this request (lib/http/request-id.ts), so audit rows name it. */
function requestIdOf(context: unknown): string {
  const headers = (context as { headers?: Headers; request?: Request } | null | undefined);
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
    await auditRoleFromClaim(db, requestId, { userId: null, username: String(user.username ?? ssoUsername(claims)), before: null, role, groups });
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
    await auditRoleFromClaim(tx, requestId, { userId, username: current.username ?? userId, before: current.role, role, groups });
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
  const [row] = await db.select({ role: userTable.role, username: userTable.username }).from(userTable).where(eq(userTable.id, userId));
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
