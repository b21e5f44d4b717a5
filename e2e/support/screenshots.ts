import type { Page } from '@playwright/test';

/**
 * The README's screenshots (docs/screenshots) are taken only when asked for, with
 * `KEEL_SCREENSHOTS=1 npm run test:e2e`: a plain test run leaves the tree as it found it
 * and spends no time encoding images nobody looks at.
 */
const SCREENSHOTS = process.env.KEEL_SCREENSHOTS === '1';

/** Captures the page as `docs/screenshots/<name>.png` when screenshots were asked for. */
export async function captureScreenshot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<void> {
  if (!SCREENSHOTS) return;
  await page.screenshot({ path: `docs/screenshots/${name}.png`, fullPage: options.fullPage ?? false });
}
