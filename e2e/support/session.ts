import { expect, type Browser, type BrowserContext, type Page } from '@playwright/test';

export const DEMO_PASSWORD = process.env.KEEL_DEMO_PASSWORD ?? 'keel-demo';

/** The shared e2e server (playwright.config.ts). */
const E2E_ORIGIN = `http://localhost:${Number(process.env.KEEL_E2E_PORT ?? 3100)}`;

/** Signs in over HTTP, as a script would, and returns the Cookie header for the session (on `origin`'s server). */
export async function sessionCookie(username: string, password = DEMO_PASSWORD, origin = E2E_ORIGIN): Promise<string> {
  const response = await fetch(`${origin}/api/auth/sign-in/username`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin },
    body: JSON.stringify({ username, password }),
  });
  if (response.status !== 200) throw new Error(`sign-in as ${username} answered ${response.status}`);
  return response.headers
    .getSetCookie()
    .map((cookie) => cookie.split(';')[0]!)
    .join('; ');
}

/**
 * Signs the page's browser context in with the request the sign-in form sends (its
 * cookies land in the context), then opens the overview, where the form lands, and waits
 * for the console shell. The form itself is driven by the specs about signing in
 * (first-day, shell, security-headers, sso); this skips rendering it for every test.
 */
export async function signIn(page: Page, username: string, password = DEMO_PASSWORD, origin = E2E_ORIGIN) {
  const response = await page.context().request.post(`${origin}/api/auth/sign-in/username`, {
    data: { username, password },
    headers: { origin },
    // A kept-alive connection the server closed as it was reused fails with ECONNRESET before
    // the request is read; it is sent again on a new one.
    maxRetries: 2,
  });
  if (response.status() !== 200) throw new Error(`sign-in as ${username} answered ${response.status()}`);
  await page.goto(`${origin}/`);
  await expect(page.getByTestId('signed-in-user')).toContainText(username);
  // Hydrated, as the form leaves it: the live status leaves `connecting` only in the browser.
  await expect(page.getByTestId('live-status')).not.toHaveAttribute('data-mode', 'connecting');
}

/** The newest toast (sonner lists the newest first). */
export const toast = (page: Page) => page.getByTestId('toast').first();

/**
 * Signed-in pages in browser contexts of their own, each closed after its test: every
 * open page refreshes on every change, so a test measures its own page, not a crowd of
 * stale ones re-rendering at once. Call in the spec's top level.
 */
export function signedInPages(test: { afterEach: (fn: () => Promise<void>) => void }) {
  const contexts: BrowserContext[] = [];
  test.afterEach(async () => {
    await Promise.all(contexts.splice(0).map((context) => context.close()));
  });
  return async function pageAs(browser: Browser, username: string): Promise<Page> {
    const context = await browser.newContext();
    contexts.push(context);
    const page = await context.newPage();
    await signIn(page, username);
    return page;
  };
}
