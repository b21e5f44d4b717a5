import { describe, expect, it } from 'vitest';
import { groupsFromClaims, parseSignInSettings, roleFromGroups } from '../../lib/config/oidc';
import { parseSettings, type SettingError } from '../../lib/config/settings';

const FULL = {
  KEEL_OIDC_ISSUER: 'https://idp.example.com/realms/ops',
  KEEL_OIDC_CLIENT_ID: 'keel',
  KEEL_OIDC_CLIENT_SECRET: 'secret',
  KEEL_OIDC_ROLE_MAP: 'keel-admins=admin, keel-approvers=approver,keel-ops=operator',
};

function parse(env: Record<string, string>) {
  const errors: SettingError[] = [];
  return { settings: parseSignInSettings(env, errors), errors };
}

describe('single sign-on settings', () => {
  it('are off by default with local passwords on', () => {
    expect(parse({})).toEqual({ settings: { oidc: undefined, localSignIn: true }, errors: [] });
    const all = parseSettings({});
    expect(all.ok && all.value.signIn).toEqual({ oidc: undefined, localSignIn: true });
  });

  it('read the provider, the defaults for scopes, claim and name, and the role map in order', () => {
    const { settings, errors } = parse(FULL);
    expect(errors).toEqual([]);
    expect(settings.oidc).toMatchObject({
      issuer: FULL.KEEL_OIDC_ISSUER,
      clientId: 'keel',
      scopes: ['openid', 'profile', 'email', 'groups'],
      groupsClaim: 'groups',
      name: 'single sign-on',
    });
    expect([...settings.oidc!.roleMap]).toEqual([
      ['keel-admins', 'admin'],
      ['keel-approvers', 'approver'],
      ['keel-ops', 'operator'],
    ]);
  });

  it('refuse a partial configuration, unknown role, repeated group, non-URL issuer, scopes without openid', () => {
    const { errors } = parse({
      KEEL_OIDC_ISSUER: 'idp.example.com',
      KEEL_OIDC_ROLE_MAP: 'a=admin,a=viewer,b=root,=viewer',
      KEEL_OIDC_SCOPES: 'profile groups',
    });
    expect(errors.map((e) => e.name).sort()).toEqual(
      [
        'KEEL_OIDC_CLIENT_ID',
        'KEEL_OIDC_CLIENT_SECRET',
        'KEEL_OIDC_ISSUER',
        'KEEL_OIDC_ROLE_MAP',
        'KEEL_OIDC_ROLE_MAP',
        'KEEL_OIDC_ROLE_MAP',
        'KEEL_OIDC_SCOPES',
      ].sort(),
    );
    expect(errors.find((e) => /root/.test(e.message))?.message).toMatch(/b maps to root, not one of viewer, operator/);
  });

  it('refuse KEEL_LOCAL_SIGN_IN=0 without single sign-on, and a value other than 0 or 1', () => {
    expect(parse({ KEEL_LOCAL_SIGN_IN: '0' }).errors).toEqual([
      expect.objectContaining({ name: 'KEEL_LOCAL_SIGN_IN' }),
    ]);
    expect(parse({ ...FULL, KEEL_LOCAL_SIGN_IN: 'off' }).errors).toEqual([
      expect.objectContaining({ name: 'KEEL_LOCAL_SIGN_IN' }),
    ]);
    expect(parse({ ...FULL, KEEL_LOCAL_SIGN_IN: '0' }).settings.localSignIn).toBe(false);
  });

  it('map groups to the most privileged mapped role, and no mapped group to no role', () => {
    const map = parse(FULL).settings.oidc!.roleMap;
    expect(roleFromGroups(['keel-ops', 'keel-approvers'], map)).toBe('approver');
    expect(roleFromGroups(['keel-approvers', 'keel-admins'], map)).toBe('admin');
    expect(roleFromGroups(['staff'], map)).toBeNull();
    expect(roleFromGroups([], map)).toBeNull();
  });

  it('read the groups claim as a list or a single string, and anything else as no groups', () => {
    expect(groupsFromClaims({ groups: ['a', 1, 'b'] }, 'groups')).toEqual(['a', 'b']);
    expect(groupsFromClaims({ roles: 'a' }, 'roles')).toEqual(['a']);
    expect(groupsFromClaims({ groups: { a: true } }, 'groups')).toEqual([]);
  });
});
