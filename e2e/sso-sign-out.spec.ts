import { expect, test, type Page } from '@playwright/test';
import { E2E_OIDC, e2eOidcIssuer } from './support/oidc';

const ssoButton = (page: Page) => page.getByRole('button', { name: `Sign in with ${E2E_OIDC.name}` });

test('signing out of Keel ends the session at the OpenID provider too', async ({ page, baseURL }) => {
  await page.goto('/sign-in');
  await ssoButton(page).click();
  await page.waitForURL((url) => url.origin === e2eOidcIssuer());
  await page.locator('input[name="login"]').fill('olga');
  await page.locator('input[name="password"]').fill('any-password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await expect(page.getByTestId('signed-in-role')).toHaveText('operator');

  // Ending only Keel's session leaves the provider's: the next sign-in goes through without its login form.
  expect((await page.request.post('/api/auth/sign-out', { headers: { origin: baseURL! }, data: {} })).status()).toBe(
    200,
  );
  await page.goto('/sign-in');
  await ssoButton(page).click();
  await expect(page.getByTestId('signed-in-role')).toHaveText('operator');

  // The console's Sign out ends both: the provider asks to confirm, then sends the browser back to Keel's sign-in page.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL((url) => url.origin === e2eOidcIssuer());
  await page.getByRole('button', { name: 'Yes, sign me out' }).click();
  await page.waitForURL((url) => url.origin === new URL(baseURL!).origin && url.pathname === '/sign-in');
  await expect(ssoButton(page)).toBeVisible();

  // The provider's session is over: signing in again asks for the login there.
  await ssoButton(page).click();
  await page.waitForURL((url) => url.origin === e2eOidcIssuer());
  await expect(page.locator('input[name="login"]')).toBeVisible();
});
