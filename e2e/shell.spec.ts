import { expect, test } from '@playwright/test';
import { signIn } from './support/session';

const PAGES = [
  { link: 'Overview', heading: 'Overview', path: '/' },
  { link: 'Executions', heading: 'Executions', path: '/executions' },
  { link: 'Retry keys', heading: 'Retry keys', path: '/retry-keys' },
  { link: 'Recovery', heading: 'Recovery', path: '/recovery' },
  { link: 'Settlements', heading: 'Settlements', path: '/settlements' },
  { link: 'Audit', heading: 'Audit', path: '/audit' },
];

test('a visitor without a session is sent to sign-in, and the API answers 401', async ({ page, request }) => {
  await page.goto('/executions');
  await expect(page).toHaveURL(/\/sign-in\?next=%2Fexecutions$/);
  await expect(page.getByRole('heading', { name: 'Sign in to Keel' })).toBeVisible();
  const api = await request.get('/api/auth/get-session');
  expect(api.status()).toBe(200);
  expect(await api.json()).toBeNull();
  const health = await request.get('/api/health');
  expect(health.status()).toBe(200);
  expect(await health.json()).toMatchObject({ status: 'ok', schema: { oxideBatch: { version: 3 } } });
});

test('the favicon is served to every visitor', async ({ request }) => {
  const icon = await request.get('/favicon.ico');
  expect(icon.status()).toBe(200);
  expect(icon.headers()['content-type']).toMatch(/image\/(x-icon|vnd\.microsoft\.icon)/);
  expect((await icon.body()).subarray(0, 4)).toEqual(Buffer.from([0, 0, 1, 0]));
});

test('a wrong password is refused with a clear message', async ({ page }) => {
  await page.goto('/sign-in');
  await page.getByLabel('Username').fill('operator');
  await page.getByLabel('Password').fill('not-the-password');
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await expect(page.locator('form').getByRole('alert')).toHaveText('Wrong username or password.');
  await expect(page).toHaveURL(/\/sign-in/);
});

test('an operator signs in, walks every page of the shell and signs out', async ({ page }) => {
  await signIn(page, 'operator');
  await expect(page.getByTestId('signed-in-role')).toHaveText('operator');
  await expect(page.getByRole('heading', { name: 'Overview' })).toBeVisible();
  // Demo data is there: the seeded executions are counted on the overview.
  await expect(page.getByText('Executions', { exact: true }).first()).toBeVisible();
  await expect(page.getByText('2,000')).toBeVisible();
  const nav = page.getByRole('navigation', { name: 'Main' });
  for (const entry of PAGES) {
    await nav.getByRole('link', { name: entry.link }).click();
    await expect(page).toHaveURL(new RegExp(`${entry.path === '/' ? '/$' : entry.path}`));
    await expect(page.getByRole('heading', { level: 1, name: entry.heading })).toBeVisible();
    await expect(nav.getByRole('link', { name: entry.link })).toHaveAttribute('aria-current', 'page');
  }
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page).toHaveURL(/\/sign-in/);
  await page.goto('/audit');
  await expect(page).toHaveURL(/\/sign-in\?next=%2Faudit$/);
});

test('a viewer signs in and sees the shell with the viewer role', async ({ page }) => {
  await signIn(page, 'viewer');
  await expect(page.getByTestId('signed-in-role')).toHaveText('viewer');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Executions' }).click();
  await expect(page.getByRole('table', { name: 'Executions' })).toBeVisible();
  await expect(page.getByRole('table', { name: 'Executions' }).getByRole('row')).toHaveCount(51);
});

test('dark mode is remembered across a reload', async ({ page }) => {
  await signIn(page, 'support');
  const html = page.locator('html');
  const startsDark = (await html.getAttribute('class'))?.includes('dark') ?? false;
  await page.getByRole('button', { name: startsDark ? 'Light mode' : 'Dark mode' }).click();
  await expect(html).toHaveClass(startsDark ? /^(?!.*dark)/ : /dark/);
  await page.reload();
  await expect(html).toHaveClass(startsDark ? /^(?!.*dark)/ : /dark/);
});
