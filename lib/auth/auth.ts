import { betterAuth } from 'better-auth';
import { drizzleAdapter } from 'better-auth/adapters/drizzle';
import { nextCookies } from 'better-auth/next-js';
import { admin, username } from 'better-auth/plugins';
import type { Database } from '../db/client';
import { account, rateLimit, session, user, verification } from '../db/schema/auth';

export interface AuthOptions {
  secret: string;
  port: number;
  baseUrl?: string;
  trustedProxies: string[];
  /** Sign-in attempts allowed per client address per minute. */
  signInPerMinute: number;
}

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
    trustedOrigins: [
      `http://localhost:${options.port}`,
      `http://127.0.0.1:${options.port}`,
      ...(options.baseUrl ? [new URL(options.baseUrl).origin] : []),
    ],
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
      ipAddress: {
        ipAddressHeaders: ['x-forwarded-for'],
        trustedProxies: options.trustedProxies,
      },
    },
    telemetry: { enabled: false },
    plugins: [admin({ defaultRole: 'viewer', adminRoles: ['admin'] }), username({ minUsernameLength: 2, maxUsernameLength: 64 }), nextCookies()],
  });
}

export type KeelAuth = ReturnType<typeof createAuth>;
