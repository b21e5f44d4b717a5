/**
 * The OpenID provider the e2e server signs in through (playwright.config.ts sets
 * KEEL_OIDC_*; e2e/oidc-setup.ts starts it on this loopback port; e2e/sso.spec.ts uses it).
 */
export const E2E_OIDC = {
  port: Number(process.env.KEEL_E2E_OIDC_PORT ?? 3196),
  clientId: 'keel-e2e',
  clientSecret: 'keel-e2e-client-secret-4c9d2a7e1f3b8a60',
  name: 'Test IdP',
  roleMap: 'keel-operators=operator,keel-approvers=approver,keel-admins=admin',
  users: [
    { sub: 'olga', name: 'Olga', groups: ['keel-operators'] },
    { sub: 'vera', name: 'Vera', groups: ['keel-approvers', 'staff'] },
    { sub: 'mallory', name: 'Mallory', groups: ['contractors'] },
  ],
};

export const e2eOidcIssuer = () => `http://127.0.0.1:${E2E_OIDC.port}`;
