import AxeBuilder from '@axe-core/playwright';
import { expect, type Page } from '@playwright/test';

/** Zero serious or critical accessibility violations on the page as it stands. */
export async function expectNoSeriousViolations(page: Page): Promise<void> {
  // Metadata streams in after the body on dynamic pages: wait for the title before judging it.
  await expect(page).toHaveTitle(/Keel/);
  const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  const serious = results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.nodes
          .map((n) => n.target.join(' '))
          .slice(0, 3)
          .join(', ')}`,
    );
  expect(serious).toEqual([]);
}

type Theme = 'light' | 'dark';

/** The theme cookie, for the host of the page's current URL (a signed-in page is on the console's). */
async function setThemeCookie(page: Page, theme: Theme): Promise<void> {
  const url = new URL(page.url());
  await page.context().addCookies([{ name: 'keel-theme', value: theme, domain: url.hostname, path: '/' }]);
}

const expectTheme = (page: Page, theme: Theme) =>
  expect(page.locator('html')).toHaveClass(theme === 'dark' ? /dark/ : /^(?!.*dark).*$/);

/** Sets the theme cookie and reloads, so the page renders in that theme from the server. */
export async function useTheme(page: Page, theme: Theme): Promise<void> {
  await setThemeCookie(page, theme);
  await page.reload();
  await expectTheme(page, theme);
}

/** Opens `path` in `theme`: the cookie set first, so the server renders it once, in that theme. */
export async function gotoInTheme(page: Page, path: string, theme: Theme): Promise<void> {
  await setThemeCookie(page, theme);
  await page.goto(path);
  await expectTheme(page, theme);
}
