import { existsSync, readFileSync } from 'node:fs';
import { expect, test, type Page } from '@playwright/test';
import { e2eDatabase } from './support/database';
import { DEMO_PASSWORD, signIn } from './support/session';

test.describe.configure({ mode: 'serial' });

const PORT = Number(process.env.KEEL_E2E_PORT ?? 3100);
const ORIGIN = `http://localhost:${PORT}`;

/** better-auth endpoints Keel does not use: each must answer 404 over HTTP, even for an admin. */
const CLOSED: Array<[method: 'GET' | 'POST', path: string]> = [
  ['POST', 'admin/impersonate-user'],
  ['POST', 'admin/stop-impersonating'],
  ['POST', 'admin/set-role'],
  ['POST', 'admin/create-user'],
  ['POST', 'admin/ban-user'],
  ['POST', 'admin/unban-user'],
  ['POST', 'admin/set-user-password'],
  ['POST', 'admin/revoke-user-sessions'],
  ['POST', 'admin/revoke-user-session'],
  ['POST', 'admin/list-user-sessions'],
  ['POST', 'admin/update-user'],
  ['POST', 'admin/remove-user'],
  ['POST', 'admin/has-permission'],
  ['GET', 'admin/list-users'],
  ['GET', 'admin/get-user'],
  ['POST', 'update-user'],
  ['POST', 'change-password'],
  ['POST', 'change-email'],
  ['POST', 'set-password'],
  ['POST', 'delete-user'],
  ['GET', 'list-sessions'],
  ['POST', 'revoke-session'],
  ['POST', 'revoke-sessions'],
  ['POST', 'revoke-other-sessions'],
  ['POST', 'is-username-available'],
  ['POST', 'sign-up/email'],
  ['POST', 'sign-in/email'],
  // POST sign-in/social and GET callback/oidc are mounted: the e2e server has single sign-on configured.
  ['GET', 'sign-in/social'],
  ['GET', 'callback/google'],
  ['POST', 'callback/oidc'],
  ['POST', 'request-password-reset'],
  ['POST', 'reset-password'],
  ['POST', 'send-verification-email'],
  ['GET', 'verify-email'],
  ['GET', 'list-accounts'],
  ['POST', 'unlink-account'],
  ['POST', 'link-social'],
  ['POST', 'refresh-token'],
  ['POST', 'get-access-token'],
  ['GET', 'account-info'],
  ['GET', 'ok'],
  ['GET', 'error'],
  ['POST', 'get-session'],
  ['GET', 'sign-in/username'],
  ['GET', 'sign-out'],
  ['POST', 'sign-in%2Fusername'],
];

const PAGES = ['/', '/executions', '/retry-keys', '/recovery', '/settlements', '/audit'];

function expectSecurityHeaders(headers: Record<string, string>) {
  const csp = headers['content-security-policy'] ?? '';
  expect(csp).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/=]+' 'strict-dynamic'/);
  expect(csp).not.toMatch(/script-src[^;]*'unsafe-inline'/);
  for (const directive of ["frame-ancestors 'none'", "object-src 'none'", "base-uri 'self'", "form-action 'self'"])
    expect(csp).toContain(directive);
  expect(headers['permissions-policy']).toContain('camera=()');
  expect(headers['permissions-policy']).toContain('microphone=()');
  expect(headers['permissions-policy']).toContain('geolocation=()');
  expect(headers['x-frame-options']).toBe('DENY');
  expect(headers['x-content-type-options']).toBe('nosniff');
}

/** Violations as the page itself sees them, and as Chromium reports them on the console. */
async function watchViolations(page: Page): Promise<string[]> {
  const violations: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
  });
  await page.exposeFunction('__keelCspViolation', (text: string) => violations.push(text));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) => {
      (window as unknown as { __keelCspViolation: (t: string) => void }).__keelCspViolation(
        `${event.violatedDirective} ${event.blockedURI}`,
      );
    });
  });
  return violations;
}

test('each better-auth endpoint Keel does not use answers 404, even for an admin; no impersonation', async ({
  page,
}) => {
  await signIn(page, 'admin');
  const db = await e2eDatabase();
  try {
    const approver = (await db.query(`select id from keel.user where username = 'approver'`)).rows[0].id as string;
    const reachable: string[] = [];
    for (const [method, path] of CLOSED) {
      const response = await page.request.fetch(`/api/auth/${path}`, {
        method,
        headers: { origin: ORIGIN, 'content-type': 'application/json' },
        data:
          method === 'POST'
            ? {
                userId: approver,
                role: 'admin',
                username: 'renamed',
                newPassword: 'x'.repeat(12),
                currentPassword: DEMO_PASSWORD,
              }
            : undefined,
      });
      if (response.status() !== 404) reachable.push(`${method} ${path} -> ${response.status()}`);
    }
    expect(reachable).toEqual([]);
    // Still the admin, nobody was renamed or re-roled, and no impersonated session exists.
    const session = await page.request.get('/api/auth/get-session');
    expect((await session.json()).user).toMatchObject({ username: 'admin', role: 'admin' });
    expect(
      (await db.query(`select count(*)::int as n from keel.session where impersonated_by is not null`)).rows[0].n,
    ).toBe(0);
    expect((await db.query(`select role from keel.user where id = $1`, [approver])).rows).toEqual([
      { role: 'approver' },
    ]);
    expect((await db.query(`select count(*)::int as n from keel.user where username = 'renamed'`)).rows[0].n).toBe(0);
  } finally {
    await db.end();
  }
});

test('the sign-in response carries no session token, and a foreign origin cannot sign anyone in', async ({
  request,
}) => {
  const ok = await request.post('/api/auth/sign-in/username', {
    headers: { origin: ORIGIN },
    data: { username: 'viewer', password: DEMO_PASSWORD },
  });
  expect(ok.status()).toBe(200);
  const body = await ok.json();
  expect(body.user).toMatchObject({ username: 'viewer' });
  expect(body).not.toHaveProperty('token');
  expectSecurityHeaders(ok.headers());
  const cookie = ok
    .headersArray()
    .find((h) => h.name.toLowerCase() === 'set-cookie' && h.value.includes('session_token='));
  expect(cookie?.value).toMatch(/HttpOnly/i);

  const foreign = await request.post('/api/auth/sign-in/username', {
    headers: { origin: 'https://evil.example' },
    data: { username: 'viewer', password: DEMO_PASSWORD },
  });
  expect(foreign.status()).toBe(403);
  expect(foreign.headersArray().filter((h) => h.name.toLowerCase() === 'set-cookie')).toEqual([]);
});

test('40 wrong passwords from 40 spoofed X-Forwarded-For: refused after 5, lockout audited, header ignored', async ({
  request,
}) => {
  const username = 'e2e_spoof_probe';
  const statuses: number[] = [];
  for (let i = 0; i < 40; i += 1) {
    const response = await request.post('/api/auth/sign-in/username', {
      headers: {
        origin: ORIGIN,
        'x-forwarded-for': `198.51.100.${i + 1}`,
        'x-keel-client-address': `203.0.113.${i + 1}`,
      },
      data: { username, password: 'not-the-password' },
    });
    statuses.push(response.status());
  }
  const refused = statuses.filter((s) => s === 429).length;
  console.log(`spoofed sign-ins refused: ${refused} of 40`);
  expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
  expect(refused).toBe(35);
  const db = await e2eDatabase();
  try {
    const audit = await db.query(
      `select action, count(*)::int as n from keel.audit_event where target_id = $1 and outcome = 'REFUSED'
       and code = 'ACCOUNT_LOCKED' group by action order by action`,
      [username],
    );
    expect(audit.rows).toEqual([
      { action: 'auth.lockout', n: 1 },
      { action: 'auth.sign_in', n: 35 },
    ]);
    const keys = (await db.query(`select key from keel.rate_limit`)).rows.map((r) => r.key as string);
    expect(keys.filter((k) => /198\.51\.100\.|203\.0\.113\./.test(k))).toEqual([]);
    // A session made under a spoofed header records the socket address.
    const signedIn = await request.post('/api/auth/sign-in/username', {
      headers: { origin: ORIGIN, 'x-forwarded-for': '198.51.100.250' },
      data: { username: 'support', password: DEMO_PASSWORD },
    });
    expect(signedIn.status()).toBe(200);
    const addresses = await db.query(
      `select distinct s.ip_address from keel.session s join keel.user u on u.id = s.user_id
       where u.username = 'support'`,
    );
    expect(addresses.rows.map((r) => r.ip_address)).not.toContain('198.51.100.250');
  } finally {
    await db.end();
  }
});

const REDIRECT_PAYLOADS = [
  '/%5Cevil.example/',
  '/%09/evil.example/',
  '//evil.example/',
  '/%2F%2Fevil.example/',
  '/.//evil.example/',
  'https://evil.example/',
  'javascript:alert(1)',
  '/%0d%0a/evil.example/',
];

test('redirect payloads after sign-in stay on the site, from the form and when already signed in', async ({ page }) => {
  await page.goto(`/sign-in?next=${REDIRECT_PAYLOADS[0]}`);
  await page.getByLabel('Username').fill('viewer');
  await page.getByLabel('Password').fill(DEMO_PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await expect(page.getByTestId('signed-in-user')).toContainText('viewer');
  expect(new URL(page.url()).origin).toBe(ORIGIN);
  for (const payload of REDIRECT_PAYLOADS) {
    await page.goto(`/sign-in?next=${payload}`);
    await expect(page.getByTestId('signed-in-user')).toContainText('viewer');
    expect(new URL(page.url()).origin, payload).toBe(ORIGIN);
  }
  // A plain console path is still followed.
  await page.goto('/sign-in?next=%2Faudit');
  await expect(page).toHaveURL(`${ORIGIN}/audit`);
});

test('the form itself stays on the site for a payload the server never saw', async ({ page }) => {
  await page.goto('/sign-in?next=/%09/evil.example/');
  await page.getByLabel('Username').fill('operator');
  await page.getByLabel('Password').fill(DEMO_PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await expect(page.getByTestId('signed-in-user')).toContainText('operator');
  expect(new URL(page.url()).origin).toBe(ORIGIN);
});

test('pages, API and sign-in carry the CSP and Permissions-Policy; the main pages run with no CSP violation', async ({
  page,
  request,
}) => {
  await page.emulateMedia({ colorScheme: 'dark' });
  const violations = await watchViolations(page);
  const signInPage = await page.goto('/sign-in');
  expectSecurityHeaders(signInPage!.headers());
  // The theme script is inline: it ran only if it carried the nonce.
  await expect(page.locator('html')).toHaveClass(/dark/);
  const nonces = new Set<string>();
  nonces.add(/'nonce-([^']+)'/.exec(signInPage!.headers()['content-security-policy']!)![1]!);
  await signIn(page, 'approver');
  for (const path of PAGES) {
    const response = await page.goto(path);
    expect(response!.status(), path).toBeLessThan(400);
    expectSecurityHeaders(response!.headers());
    nonces.add(/'nonce-([^']+)'/.exec(response!.headers()['content-security-policy']!)![1]!);
    await expect(page.getByTestId('signed-in-user')).toContainText('approver');
  }
  // A fresh nonce per response.
  expect(nonces.size).toBe(PAGES.length + 1);
  // Client-side navigation too.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Executions' }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Executions' })).toBeVisible();
  expect(violations).toEqual([]);

  const health = await request.get('/api/health');
  expectSecurityHeaders(health.headers());
  const unauthenticated = await request.get('/api/executions');
  expect(unauthenticated.status()).toBe(401);
  expectSecurityHeaders(unauthenticated.headers());
  const notFound = await request.get('/api/auth/admin/list-users');
  expect(notFound.status()).toBe(404);
  expectSecurityHeaders(notFound.headers());
});

/** The local addresses of the listening TCP sockets on `port`, read from the kernel's tables. */
function listeningAddresses(port: number): string[] {
  const LISTEN = '0A';
  const addresses: string[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!existsSync(table)) continue;
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (!local || state !== LISTEN) continue;
      const [hex, portHex] = local.split(':');
      if (parseInt(portHex!, 16) !== port) continue;
      // IPv4 is one little-endian word; IPv6 four of them.
      const words = hex!.match(/.{8}/g)!.map((w) => w.match(/../g)!.reverse().join(''));
      addresses.push(
        words.length === 1
          ? words[0]!
              .match(/../g)!
              .map((b) => parseInt(b, 16))
              .join('.')
          : words.join(':'),
      );
    }
  }
  return addresses;
}

test('in demo mode, whose users have a published password, the console listens on loopback only', async ({
  request,
}) => {
  expect((await request.get('/api/health')).status()).toBe(200);
  expect(listeningAddresses(PORT)).toEqual(['127.0.0.1']);
});
