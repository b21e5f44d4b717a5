import { expect, test, type Page } from '@playwright/test';
import { e2eDatabase } from './support/database';
import { signedInPages, signIn } from './support/session';

test.use({ viewport: { width: 1440, height: 900 } });

const pageAs = signedInPages(test);

/**
 * A pending proposal's page that the admin did not propose (four eyes would keep the
 * admin from deciding it), made through the execution page by `page`'s user when there is none.
 */
async function pendingProposal(page: Page): Promise<string> {
  const db = await e2eDatabase();
  try {
    const pending = await db.query(`select id from keel.recovery_proposal
      where status = 'PENDING' and target_kind = 'batch' and proposer_login <> 'admin' order by id desc limit 1`);
    if (pending.rows.length) return `/recovery/${pending.rows[0].id}`;
    const stale = await db.query(`select e.id from oxide_batch.ob_job_execution e where e.status = 'STARTED'
      and e.updated_at < clock_timestamp() - interval '30 minutes'
      and not exists (select 1 from keel.recovery_proposal p where p.target_id = e.id::text) order by e.id limit 1`);
    await page.goto(`/executions/${stale.rows[0].id}`);
    await page.getByRole('button', { name: 'Request takeover' }).click();
    await page.getByRole('alertdialog').getByLabel('Reason for the request').fill('The worker host stopped answering.');
    await page.getByRole('alertdialog').getByRole('button', { name: 'Create proposal' }).click();
    await expect(page).toHaveURL(/\/recovery\/\d+$/);
    return new URL(page.url()).pathname;
  } finally {
    await db.end();
  }
}

test('each confirmation on the proposal page is an alertdialog named by its title, and reopens after Escape', async ({
  browser,
}) => {
  const path = await pendingProposal(await pageAs(browser, 'operator'));
  const page = await pageAs(browser, 'admin');
  await page.goto(path);
  const id = path.split('/').pop();
  for (const [button, name] of [
    ['Reject', `Reject proposal ${id}`],
    ['Cancel proposal', `Cancel proposal ${id}`],
    ['Confirm takeover', /^Confirm takeover of execution \d+$/],
    ['Reject', `Reject proposal ${id}`],
  ] as const) {
    const opener = page.getByRole('region', { name: 'Decision' }).getByRole('button', { name: button, exact: true });
    await opener.click();
    const dialog = page.getByRole('alertdialog', { name });
    await expect(dialog).toBeVisible();
    await expect(dialog).toHaveAccessibleDescription(
      /nothing changes on the target|If the execution is still at version/,
    );
    await expect(page.getByRole('alertdialog')).toHaveCount(1);
    await page.keyboard.press('Escape');
    await expect(page.getByRole('alertdialog')).toHaveCount(0);
    await expect(opener).toBeFocused();
  }
});

test('a toast closes after 6 s, but not while focus is inside it', async ({ page }) => {
  await page.clock.install();
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
  await signIn(page, 'admin');
  await pendingProposal(page);
  await page.goto('/audit');
  // The page's clock stands still from here; only runFor moves it.
  await page.clock.pauseAt((await page.evaluate(() => Date.now())) + 5_000);
  await page
    .getByRole('button', { name: /^Copy digest / })
    .first()
    .click();
  // The toast list loads with a page's first toast; the stopped clock moves in small steps until it shows.
  const toast = page.getByTestId('toast').first();
  await expect
    .poll(async () => {
      await page.clock.runFor(50);
      return toast.isVisible();
    })
    .toBe(true);
  await expect(toast).toContainText('Digest copied');

  await toast.getByRole('button', { name: 'Close toast' }).focus();
  await page.clock.runFor(15_000);
  await expect(toast).toBeVisible();

  // Focus leaves: a fresh 6 s, then it goes.
  await page.getByRole('heading', { level: 1 }).click();
  await page.clock.runFor(3_000);
  await expect(toast).toBeVisible();
  await page.clock.runFor(4_000);
  await expect(page.getByTestId('toast')).toHaveCount(0);
});
