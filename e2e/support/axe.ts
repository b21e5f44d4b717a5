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

/** Sets the theme cookie and reloads, so the page renders in that theme from the server. */
export async function useTheme(page: Page, theme: 'light' | 'dark'): Promise<void> {
  const url = new URL(page.url());
  await page.context().addCookies([{ name: 'keel-theme', value: theme, domain: url.hostname, path: '/' }]);
  await page.reload();
  await expect(page.locator('html')).toHaveClass(theme === 'dark' ? /dark/ : /^(?!.*dark).*$/);
}
