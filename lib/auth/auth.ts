import { betterAuth } from 'better-auth';
import { drizzleAdapter } from 'better-auth/adapters/drizzle';
import { nextCookies } from 'better-auth/next-js';
import { admin, username } from 'better-auth/plugins';
import { defaultAc } from 'better-auth/plugins/admin/access';
import { CLIENT_ADDRESS_HEADER } from '../http/client-address';
import { logger } from '../server/logger';
import type { Database } from '../db/client';
import { account, rateLimit, session, user, verification } from '../db/schema/auth';
import { ROLES } from './roles';

export interface AuthOptions {
  secret: string;
  port: number;
  baseUrl?: string;
  /** Sign-in attempts allowed per client address per minute. */
  signInPerMinute: number;
}

/** The origins the console is served from: sign-in is accepted only from these (login CSRF). */
export function consoleOrigins(options: Pick<AuthOptions, 'port' | 'baseUrl'>): string[] {
  return [
    `http://localhost:${options.port}`,
    `http://127.0.0.1:${options.port}`,
    ...(options.baseUrl ? [new URL(options.baseUrl).origin] : []),
  ];
}

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
    plugins: [admin({ defaultRole: 'viewer', adminRoles: ['admin'], roles }), username({ minUsernameLength: 2, maxUsernameLength: 64 }), nextCookies()],
  });
}

export type KeelAuth = ReturnType<typeof createAuth>;
