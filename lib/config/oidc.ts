import { isRole, ROLES, type Role } from '../domain/roles';
import type { SettingError } from './setting-error';

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

type Env = Record<string, string | undefined>;

const DEFAULT_SCOPES = 'openid profile email groups';

export { BREAK_GLASS_PREFIX, SSO_USERNAME_PREFIX } from '../domain/new-user-check';

/**
 * `keel-admins=admin,keel-approvers=approver`: each group names one role. A group
 * may appear once; roles may repeat (two groups for one role).
 */
export function parseRoleMap(raw: string, errors: SettingError[]): Map<string, Role> {
  const map = new Map<string, Role>();
  for (const entry of raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const at = entry.lastIndexOf('=');
    const group = at > 0 ? entry.slice(0, at).trim() : '';
    const role = entry.slice(at + 1).trim();
    if (!group) {
      errors.push({
        name: 'KEEL_OIDC_ROLE_MAP',
        message: `KEEL_OIDC_ROLE_MAP entries are group=role; "${entry}" is not`,
      });
      continue;
    }
    if (!isRole(role)) {
      errors.push({
        name: 'KEEL_OIDC_ROLE_MAP',
        message: `KEEL_OIDC_ROLE_MAP: ${group} maps to ${role}, not one of ${ROLES.join(', ')}`,
      });
      continue;
    }
    if (map.has(group)) {
      errors.push({ name: 'KEEL_OIDC_ROLE_MAP', message: `KEEL_OIDC_ROLE_MAP names the group ${group} twice` });
      continue;
    }
    map.set(group, role);
  }
  return map;
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

/**
 * KEEL_OIDC_* settings: all of issuer, client id and role map, or none (SSO off).
 * The client secret is required too: Keel is a confidential client.
 */
export function parseSignInSettings(env: Env, errors: SettingError[]): SignInSettings {
  const raw = env.KEEL_LOCAL_SIGN_IN?.trim();
  let localSignIn = true;
  if (raw === '0' || raw === 'false') localSignIn = false;
  else if (raw && raw !== '1' && raw !== 'true')
    errors.push({ name: 'KEEL_LOCAL_SIGN_IN', message: `KEEL_LOCAL_SIGN_IN=${raw} must be 0 or 1` });

  const issuer = env.KEEL_OIDC_ISSUER?.trim() || undefined;
  const clientId = env.KEEL_OIDC_CLIENT_ID?.trim() || undefined;
  const clientSecret = env.KEEL_OIDC_CLIENT_SECRET?.trim() || undefined;
  const roleMapRaw = env.KEEL_OIDC_ROLE_MAP?.trim() || undefined;
  if (!issuer && !clientId && !clientSecret && !roleMapRaw) {
    if (!localSignIn) {
      errors.push({
        name: 'KEEL_LOCAL_SIGN_IN',
        message: 'KEEL_LOCAL_SIGN_IN=0 needs single sign-on configured (KEEL_OIDC_ISSUER and the rest)',
      });
    }
    return { oidc: undefined, localSignIn };
  }
  const missing = [
    ['KEEL_OIDC_ISSUER', issuer],
    ['KEEL_OIDC_CLIENT_ID', clientId],
    ['KEEL_OIDC_CLIENT_SECRET', clientSecret],
    ['KEEL_OIDC_ROLE_MAP', roleMapRaw],
  ].filter(([, value]) => !value);
  for (const [name] of missing)
    errors.push({ name: name!, message: `${name} is required when single sign-on is configured` });
  if (issuer && (!URL.canParse(issuer) || !/^https?:$/.test(new URL(issuer).protocol))) {
    errors.push({ name: 'KEEL_OIDC_ISSUER', message: `KEEL_OIDC_ISSUER=${issuer} is not an http(s) URL` });
  }
  const scopes = (env.KEEL_OIDC_SCOPES?.trim() || DEFAULT_SCOPES).split(/[\s,]+/).filter(Boolean);
  if (!scopes.includes('openid'))
    errors.push({ name: 'KEEL_OIDC_SCOPES', message: 'KEEL_OIDC_SCOPES must include openid' });
  const groupsClaim = env.KEEL_OIDC_GROUPS_CLAIM?.trim() || 'groups';
  const name = env.KEEL_OIDC_NAME?.trim() || 'single sign-on';
  if (name.length > 64)
    errors.push({ name: 'KEEL_OIDC_NAME', message: 'KEEL_OIDC_NAME must be at most 64 characters' });
  const roleMap = parseRoleMap(roleMapRaw ?? '', errors);
  if (roleMapRaw && roleMap.size === 0 && !errors.some((e) => e.name === 'KEEL_OIDC_ROLE_MAP')) {
    errors.push({ name: 'KEEL_OIDC_ROLE_MAP', message: 'KEEL_OIDC_ROLE_MAP maps no group' });
  }
  return {
    oidc: {
      issuer: issuer ?? '',
      clientId: clientId ?? '',
      clientSecret: clientSecret ?? '',
      scopes,
      groupsClaim,
      roleMap,
      name,
    },
    localSignIn,
  };
}
