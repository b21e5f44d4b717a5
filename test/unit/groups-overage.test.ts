import { describe, expect, it } from 'vitest';
import { groupsFromClaims, groupsOverage } from '../../lib/config/oidc';

describe('groups overage (Entra ID leaves the groups out of a token that would carry too many)', () => {
  const graph = { src1: { endpoint: 'https://graph.microsoft.com/v1.0/users/u/getMemberObjects' } };

  it('is signalled by _claim_names naming the groups claim', () => {
    const claims = { sub: 'u', _claim_names: { groups: 'src1' }, _claim_sources: graph };
    expect(groupsOverage(claims, 'groups')).toBe(true);
    // Such a token would read as "no groups" otherwise.
    expect(groupsFromClaims(claims, 'groups')).toEqual([]);
  });

  it('is signalled by hasgroups (the implicit flow), for the groups claim only', () => {
    expect(groupsOverage({ sub: 'u', hasgroups: true }, 'groups')).toBe(true);
    expect(groupsOverage({ sub: 'u', hasgroups: 'true' }, 'groups')).toBe(true);
    expect(groupsOverage({ sub: 'u', hasgroups: true }, 'roles')).toBe(false);
  });

  it('is not signalled when the claim is there, or when _claim_names names another claim', () => {
    expect(groupsOverage({ sub: 'u', groups: ['a'], _claim_names: { groups: 'src1' } }, 'groups')).toBe(false);
    expect(groupsOverage({ sub: 'u', _claim_names: { address: 'src1' } }, 'groups')).toBe(false);
    expect(groupsOverage({ sub: 'u' }, 'groups')).toBe(false);
    expect(groupsOverage({ sub: 'u', _claim_names: 'groups' }, 'groups')).toBe(false);
    expect(groupsOverage({ sub: 'u', _claim_names: null }, 'groups')).toBe(false);
  });

  it('follows KEEL_OIDC_GROUPS_CLAIM', () => {
    expect(groupsOverage({ sub: 'u', _claim_names: { roles: 'src1' } }, 'roles')).toBe(true);
    expect(groupsOverage({ sub: 'u', _claim_names: { roles: 'src1' } }, 'groups')).toBe(false);
  });
});
