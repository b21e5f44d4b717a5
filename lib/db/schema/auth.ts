import { sql } from 'drizzle-orm';
import { bigint, boolean, check, index, integer, text, timestamp } from 'drizzle-orm/pg-core';
import { ZONE_NAME_SHAPE } from '../../domain/time-zone';
import { keel } from './keel';

/**
 * Sign-in tables in the shape better-auth 1.7 expects (core, admin and username
 * plugins, database rate limiting), kept in the `keel` schema.
 */
const stamp = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

export const user = keel.table(
  'user',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    email: text('email').notNull().unique(),
    emailVerified: boolean('email_verified').notNull().default(false),
    image: text('image'),
    createdAt: stamp('created_at').notNull().defaultNow(),
    updatedAt: stamp('updated_at')
      .notNull()
      .defaultNow()
      .$onUpdate(() => new Date()),
    username: text('username').unique(),
    displayUsername: text('display_username'),
    role: text('role').notNull().default('viewer'),
    banned: boolean('banned').default(false),
    banReason: text('ban_reason'),
    banExpires: stamp('ban_expires'),
    /**
     * Where the console shows this user's times: 'utc', 'browser' or an IANA zone name
     * (lib/domain/time-zone.ts checks it with Intl; the CHECK keeps out what cannot be one).
     */
    timeZone: text('time_zone').notNull().default('utc'),
  },
  (t) => [
    index('user_role_idx').on(t.role),
    // The shape of a zone name, as lib/domain/time-zone.ts allows it; Intl there decides whether the zone exists.
    check(
      'user_time_zone_shape',
      sql`${t.timeZone} in ('utc', 'browser')
        or (char_length(${t.timeZone}) <= 64 and ${t.timeZone} ~ ${sql.raw(`'${ZONE_NAME_SHAPE.source}'`)})`,
    ),
  ],
);

export const session = keel.table(
  'session',
  {
    id: text('id').primaryKey(),
    expiresAt: stamp('expires_at').notNull(),
    token: text('token').notNull().unique(),
    createdAt: stamp('created_at').notNull().defaultNow(),
    updatedAt: stamp('updated_at')
      .notNull()
      .defaultNow()
      .$onUpdate(() => new Date()),
    ipAddress: text('ip_address'),
    userAgent: text('user_agent'),
    userId: text('user_id')
      .notNull()
      .references(() => user.id, { onDelete: 'cascade' }),
    impersonatedBy: text('impersonated_by'),
  },
  (t) => [index('session_user_idx').on(t.userId)],
);

export const account = keel.table(
  'account',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id').notNull(),
    providerId: text('provider_id').notNull(),
    userId: text('user_id')
      .notNull()
      .references(() => user.id, { onDelete: 'cascade' }),
    accessToken: text('access_token'),
    refreshToken: text('refresh_token'),
    idToken: text('id_token'),
    accessTokenExpiresAt: stamp('access_token_expires_at'),
    refreshTokenExpiresAt: stamp('refresh_token_expires_at'),
    scope: text('scope'),
    password: text('password'),
    createdAt: stamp('created_at').notNull().defaultNow(),
    updatedAt: stamp('updated_at')
      .notNull()
      .defaultNow()
      .$onUpdate(() => new Date()),
  },
  (t) => [index('account_user_idx').on(t.userId)],
);

export const verification = keel.table(
  'verification',
  {
    id: text('id').primaryKey(),
    identifier: text('identifier').notNull(),
    value: text('value').notNull(),
    expiresAt: stamp('expires_at').notNull(),
    createdAt: stamp('created_at').notNull().defaultNow(),
    updatedAt: stamp('updated_at')
      .notNull()
      .defaultNow()
      .$onUpdate(() => new Date()),
  },
  (t) => [index('verification_identifier_idx').on(t.identifier)],
);

export const rateLimit = keel.table('rate_limit', {
  id: text('id').primaryKey(),
  key: text('key').notNull().unique(),
  count: integer('count').notNull(),
  lastRequest: bigint('last_request', { mode: 'number' }).notNull(),
});

/**
 * Failed sign-ins per username, whatever the client address (lib/domain/sign-in-lockout.ts).
 * Keyed by the lower-cased name typed, so unknown names lock the same way as real ones.
 */
export const signInLockout = keel.table('sign_in_lockout', {
  username: text('username').primaryKey(),
  failures: integer('failures').notNull().default(0),
  lockouts: integer('lockouts').notNull().default(0),
  lastFailureAt: stamp('last_failure_at'),
  lockedUntil: stamp('locked_until'),
});

/**
 * The audit CSV exports running across every instance, each holding one row until it
 * ends (lib/adapters/export-slots.ts): per user and per role at most EXPORT_LIMITS'
 * shares. A row whose process died is void once `expires_at` passes (an export never
 * runs longer).
 */
export const exportSlot = keel.table(
  'export_slot',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    userId: text('user_id').notNull(),
    role: text('role').notNull(),
    acquiredAt: stamp('acquired_at').notNull().defaultNow(),
    expiresAt: stamp('expires_at').notNull(),
  },
  (t) => [index('export_slot_expires_idx').on(t.expiresAt)],
);

export type UserRow = typeof user.$inferSelect;
