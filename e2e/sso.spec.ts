import { expect, test, type Page } from '@playwright/test';
import { E2E_OIDC, e2eOidcIssuer } from './support/oidc';

/** Clicks "Sign in with <provider>" and signs in at the provider's own login form. */
async function signInAtProvider(page: Page, login: string) {
  await page.goto('/sign-in');
  await page.getByRole('button', { name: `Sign in with ${E2E_OIDC.name}` }).click();
  await page.waitForURL((url) => url.origin === e2eOidcIssuer());
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('any-password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
}

test('an operator signs in through the OpenID provider and lands with the role their group maps to', async ({
  page,
}) => {
  await signInAtProvider(page, 'olga');
  await expect(page).toHaveURL(/\/$/);
  await expect(page.getByTestId('signed-in-role')).toHaveText('operator');
  await expect(page.getByTestId('signed-in-user')).toContainText('sso.olga');
});

test('an approver in two groups gets the mapped one', async ({ page }) => {
  await signInAtProvider(page, 'vera');
  await expect(page).toHaveURL(/\/$/);
  await expect(page.getByTestId('signed-in-role')).toHaveText('approver');
});

test('a user in no mapped group is refused with a clear message and no session', async ({ page, request }) => {
  await signInAtProvider(page, 'mallory');
  await expect(page).toHaveURL(/\/sign-in\?error=NO_MAPPED_GROUP/);
  await expect(page.getByRole('main').getByRole('alert')).toHaveText(
    'Your account at the identity provider is in no group that gives access to Keel. ' +
      'Ask an administrator to add you to one.',
  );
  const session = await page.request.get('/api/auth/get-session');
  expect(await session.json()).toBeNull();
  expect((await request.get('/api/auth/get-session')).status()).toBe(200);
});

test('the password form stays beside single sign-on', async ({ page }) => {
  await page.goto('/sign-in');
  await expect(page.getByRole('button', { name: `Sign in with ${E2E_OIDC.name}` })).toBeVisible();
  await expect(page.getByLabel('Username')).toBeVisible();
});
