import { expect, type Page } from '@playwright/test';

export const DEMO_PASSWORD = process.env.KEEL_DEMO_PASSWORD ?? 'keel-demo';

/** Signs in through the form, as a person would, and waits for the console shell. */
export async function signIn(page: Page, username: string, password = DEMO_PASSWORD): Promise<void> {
  await page.goto('/sign-in');
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await expect(page.getByTestId('signed-in-user')).toContainText(username);
}
