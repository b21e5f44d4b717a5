import type { z } from 'zod';
import { isRole, ROLES, type Role } from '../domain/roles';
import type { SettingError } from './setting-error';
import {
  flagSetting,
  parseSettingGroup,
  refuseNamed,
  settingsObject,
  textSetting,
  textSettingOr,
  type Env,
} from './setting-schema';

/** The one OpenID provider Keel signs in through; its id is in the callback path. */
export const OIDC_PROVIDER_ID = 'oidc';

/** Where the provider sends the browser back: register `<console origin>` + this path. */
export const OIDC_CALLBACK_PATH = `/api/auth/callback/${OIDC_PROVIDER_ID}`;

export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  scopes: string[];
  groupsClaim: string;
  /** Provider group to Keel role, in the order written. */
  roleMap: ReadonlyMap<string, Role>;
  /** Shown as "Sign in with <name>". */
  name: string;
}

export interface SignInSettings {
  oidc: OidcSettings | undefined;
  /** False: password sign-in only for break-glass users (usernames starting `breakglass.`). */
  localSignIn: boolean;
}

const DEFAULT_SCOPES = 'openid profile email groups';

export { BREAK_GLASS_PREFIX, SSO_USERNAME_PREFIX } from '../domain/new-user-check';

/**
 * `keel-admins=admin,keel-approvers=approver`: each group names one role. A group
 * may appear once; roles may repeat (two groups for one role). `problems` says what
 * is wrong with each entry that is not used.
 */
export function parseRoleMap(raw: string): { roleMap: Map<string, Role>; problems: string[] } {
  const roleMap = new Map<string, Role>();
  const problems: string[] = [];
  for (const entry of raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const at = entry.lastIndexOf('=');
    const group = at > 0 ? entry.slice(0, at).trim() : '';
    const role = entry.slice(at + 1).trim();
    if (!group) problems.push(`KEEL_OIDC_ROLE_MAP entries are group=role; "${entry}" is not`);
    else if (!isRole(role))
      problems.push(`KEEL_OIDC_ROLE_MAP: ${group} maps to ${role}, not one of ${ROLES.join(', ')}`);
    else if (roleMap.has(group)) problems.push(`KEEL_OIDC_ROLE_MAP names the group ${group} twice`);
    else roleMap.set(group, role);
  }
  return { roleMap, problems };
}

/** Most privilege last: with several mapped groups the highest role wins. */
const PRIVILEGE: readonly Role[] = ['viewer', 'support', 'operator', 'approver', 'admin'];

/** The role a user's groups give, or null when no group is mapped (no access). */
export function roleFromGroups(groups: readonly string[], roleMap: ReadonlyMap<string, Role>): Role | null {
  let best: Role | null = null;
  for (const group of groups) {
    const role = roleMap.get(group);
    if (role && (best === null || PRIVILEGE.indexOf(role) > PRIVILEGE.indexOf(best))) best = role;
  }
  return best;
}

/** The groups claim as a list of strings: an array, or one string; anything else is no groups. */
export function groupsFromClaims(claims: Record<string, unknown>, claim: string): string[] {
  const value = claims[claim];
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((g): g is string => typeof g === 'string');
  return [];
}

/**
 * Whether the provider left the groups out because there were too many of them. Entra ID
 * does so past 200 groups in a JWT (6 in a URL): `_claim_names` then names the groups claim
 * (a distributed claim, to be read from Microsoft Graph), or `hasgroups` is true. Such a
 * token says nothing about the user's groups, so it must not count as "no groups".
 */
export function groupsOverage(claims: Record<string, unknown>, claim: string): boolean {
  if (claims[claim] !== undefined) return false;
  const names = claims._claim_names;
  if (names !== null && typeof names === 'object' && Object.hasOwn(names, claim)) return true;
  return claim === 'groups' && (claims.hasgroups === true || claims.hasgroups === 'true');
}

/** The single sign-on fields of the settings schema (lib/config/settings.ts): KEEL_LOCAL_SIGN_IN and KEEL_OIDC_*. */
export const signInFields = {
  KEEL_LOCAL_SIGN_IN: flagSetting('KEEL_LOCAL_SIGN_IN'),
  KEEL_OIDC_ISSUER: textSetting,
  KEEL_OIDC_CLIENT_ID: textSetting,
  KEEL_OIDC_CLIENT_SECRET: textSetting,
  KEEL_OIDC_ROLE_MAP: textSetting,
  KEEL_OIDC_SCOPES: textSettingOr(DEFAULT_SCOPES).transform((scopes) => scopes.split(/[\s,]+/).filter(Boolean)),
  KEEL_OIDC_GROUPS_CLAIM: textSettingOr('groups'),
  KEEL_OIDC_NAME: textSettingOr('single sign-on'),
};

export type SignInFields = z.output<z.ZodObject<typeof signInFields>>;

const REQUIRED_FOR_SSO = [
  'KEEL_OIDC_ISSUER',
  'KEEL_OIDC_CLIENT_ID',
  'KEEL_OIDC_CLIENT_SECRET',
  'KEEL_OIDC_ROLE_MAP',
] as const;

const ssoConfigured = (fields: SignInFields): boolean => REQUIRED_FOR_SSO.some((name) => fields[name] !== undefined);

const isHttpUrl = (value: string): boolean => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol);

/**
 * KEEL_OIDC_* settings: all of issuer, client id and role map, or none (SSO off).
 * The client secret is required too: Keel is a confidential client.
 */
export function signInRules(fields: SignInFields, ctx: z.RefinementCtx): void {
  if (!ssoConfigured(fields)) {
    if (fields.KEEL_LOCAL_SIGN_IN === false) {
      const message = 'KEEL_LOCAL_SIGN_IN=0 needs single sign-on configured (KEEL_OIDC_ISSUER and the rest)';
      refuseNamed(ctx, 'KEEL_LOCAL_SIGN_IN', message);
    }
    return;
  }
  for (const name of REQUIRED_FOR_SSO)
    if (fields[name] === undefined) refuseNamed(ctx, name, `${name} is required when single sign-on is configured`);
  const issuer = fields.KEEL_OIDC_ISSUER;
  if (issuer !== undefined && !isHttpUrl(issuer))
    refuseNamed(ctx, 'KEEL_OIDC_ISSUER', `KEEL_OIDC_ISSUER=${issuer} is not an http(s) URL`);
  if (!fields.KEEL_OIDC_SCOPES.includes('openid'))
    refuseNamed(ctx, 'KEEL_OIDC_SCOPES', 'KEEL_OIDC_SCOPES must include openid');
  if (fields.KEEL_OIDC_NAME.length > 64)
    refuseNamed(ctx, 'KEEL_OIDC_NAME', 'KEEL_OIDC_NAME must be at most 64 characters');
  const { roleMap, problems } = parseRoleMap(fields.KEEL_OIDC_ROLE_MAP ?? '');
  for (const problem of problems) refuseNamed(ctx, 'KEEL_OIDC_ROLE_MAP', problem);
  if (fields.KEEL_OIDC_ROLE_MAP !== undefined && roleMap.size === 0 && problems.length === 0)
    refuseNamed(ctx, 'KEEL_OIDC_ROLE_MAP', 'KEEL_OIDC_ROLE_MAP maps no group');
}

/** What the sign-in pages and better-auth read, once the fields and their rules hold. */
export function toSignInSettings(fields: SignInFields): SignInSettings {
  const localSignIn = fields.KEEL_LOCAL_SIGN_IN ?? true;
  if (!ssoConfigured(fields)) return { oidc: undefined, localSignIn };
  return {
    oidc: {
      issuer: fields.KEEL_OIDC_ISSUER ?? '',
      clientId: fields.KEEL_OIDC_CLIENT_ID ?? '',
      clientSecret: fields.KEEL_OIDC_CLIENT_SECRET ?? '',
      scopes: fields.KEEL_OIDC_SCOPES,
      groupsClaim: fields.KEEL_OIDC_GROUPS_CLAIM,
      roleMap: parseRoleMap(fields.KEEL_OIDC_ROLE_MAP ?? '').roleMap,
      name: fields.KEEL_OIDC_NAME,
    },
    localSignIn,
  };
}

const signInSettingsSchema = settingsObject(signInFields, signInRules).transform(toSignInSettings);

/**
 * The single sign-on settings alone (`keel start` checks the provider before anything else), by
 * the same fields and rules as the whole settings schema; refusals are added to `errors`.
 */
export function parseSignInSettings(env: Env, errors: SettingError[]): SignInSettings {
  return parseSettingGroup(signInSettingsSchema, env, errors, { oidc: undefined, localSignIn: true });
}
