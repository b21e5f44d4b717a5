import { expect, test, type Page } from '@playwright/test';
import { expectNoSeriousViolations, useTheme } from './support/axe';
import { e2eDatabase } from './support/database';
import { signIn } from './support/session';

test.use({ viewport: { width: 1440, height: 900 } });
test.describe.configure({ mode: 'serial' });

/** The pages operators and approvers work in, each checked with axe and captured in both themes. */
async function pagesToCheck(page: Page): Promise<{ name: string; path: string; heading: string | RegExp }[]> {
  const db = await e2eDatabase();
  try {
    const stale = await db.query(`select e.id from oxide_batch.ob_job_execution e where e.status = 'STARTED'
      and e.updated_at < clock_timestamp() - interval '30 minutes'
      and not exists (select 1 from keel.recovery_proposal p where p.target_id = e.id::text) order by e.id desc limit 1`);
    const executionId = Number(stale.rows[0].id);
    // A pending proposal to look at: made through the page, as an operator would.
    await page.goto(`/executions/${executionId}`);
    await page.getByRole('button', { name: 'Request takeover' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Create proposal' }).click();
    await expect(page).toHaveURL(/\/recovery\/\d+$/);
    const proposalPath = new URL(page.url()).pathname;
    return [
      { name: 'overview', path: '/', heading: 'Overview' },
      { name: 'executions', path: '/executions', heading: 'Executions' },
      { name: 'execution', path: `/executions/${executionId}`, heading: `Execution ${executionId}` },
      { name: 'retry-keys', path: '/retry-keys', heading: 'Retry keys' },
      { name: 'recovery', path: '/recovery', heading: 'Recovery' },
      { name: 'proposal', path: proposalPath, heading: /^Proposal \d+$/ },
    ];
  } finally {
    await db.end();
  }
}

test('overview, executions, retry keys and recovery pages have no serious accessibility violations, light and dark', async ({ page }) => {
  test.setTimeout(180_000);
  await signIn(page, 'operator');
  const pages = await pagesToCheck(page);
  for (const theme of ['light', 'dark'] as const) {
    for (const entry of pages) {
      await page.goto(entry.path);
      await useTheme(page, theme);
      await expect(page.getByRole('heading', { level: 1, name: entry.heading })).toBeVisible();
      await expectNoSeriousViolations(page);
      await page.screenshot({ path: `docs/screenshots/${entry.name}-${theme}.png` });
    }
  }
});

test('keyboard: ? lists the shortcuts, / focuses the search, g e goes to executions', async ({ page }) => {
  await signIn(page, 'viewer');
  await page.keyboard.press('?');
  await expect(page.getByRole('dialog', { name: 'Keyboard shortcuts' })).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(page.getByRole('dialog', { name: 'Keyboard shortcuts' })).toBeHidden();
  await page.keyboard.press('g');
  await page.keyboard.press('e');
  await expect(page).toHaveURL(/\/executions$/);
  await page.keyboard.press('/');
  await expect(page.getByLabel('Search (execution or instance id)')).toBeFocused();
  await page.keyboard.type('42');
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(/q=42/);
  await expect(page.getByRole('link', { name: '42', exact: true })).toBeVisible();
});
