import { expect, test, type Locator, type Page } from '@playwright/test';
import { expectNoSeriousViolations, gotoInTheme } from './support/axe';
import { e2eDatabase } from './support/database';
import { signIn } from './support/session';
import { captureScreenshot } from './support/screenshots';

const PHONE = { width: 390, height: 844 };
test.use({ viewport: PHONE });
test.describe.configure({ mode: 'serial' });

/**
 * Every console page an admin can open, with ids taken from the
 * demo data (a proposal made through the page if there is none).
 */
async function consolePages(page: Page): Promise<{ name: string; path: string }[]> {
  const db = await e2eDatabase();
  try {
    const pending = await db.query(`select id from keel.recovery_proposal limit 1`);
    if (pending.rows.length === 0) {
      const stale = await db.query(`select e.id from oxide_batch.ob_job_execution e where e.status = 'STARTED'
        and e.updated_at < clock_timestamp() - interval '30 minutes' order by e.id desc limit 1`);
      await page.goto(`/executions/${stale.rows[0].id}`);
      await page.getByRole('button', { name: 'Request takeover' }).click();
      await page
        .getByRole('alertdialog')
        .getByLabel('Reason for the request')
        .fill('The worker host stopped answering.');
      await page.getByRole('alertdialog').getByRole('button', { name: 'Create proposal' }).click();
      await expect(page).toHaveURL(/\/recovery\/\d+$/);
    }
    const execution = await db.query(`select e.id from oxide_batch.ob_job_execution e
      where exists (select 1 from oxide_batch.ob_step_execution s where s.job_execution_id = e.id) order by e.id desc
      limit 1`);
    const proposal = await db.query(`select id from keel.recovery_proposal order by id desc limit 1`);
    const receipt = await db.query(`select receipt_id from settle.dead_letters order by receipt_id limit 1`);
    const keyed = await db.query(`select s.job_execution_id as id from oxide_batch.ob_step_execution s
      where jsonb_typeof(s.fault_state_payload -> 'entries') = 'array'
        and jsonb_array_length(s.fault_state_payload -> 'entries') > 0
      order by s.job_execution_id desc limit 1`);
    return [
      { name: 'overview', path: '/' },
      { name: 'rates', path: '/rates' },
      { name: 'executions', path: '/executions' },
      { name: 'execution', path: `/executions/${execution.rows[0].id}` },
      { name: 'retry-keys', path: '/retry-keys' },
      { name: 'retry-keys-execution', path: `/retry-keys?execution=${keyed.rows[0].id}` },
      { name: 'recovery', path: '/recovery' },
      ...(proposal.rows.length ? [{ name: 'proposal', path: `/recovery/${proposal.rows[0].id}` }] : []),
      { name: 'settlements', path: '/settlements' },
      { name: 'dead-letters', path: '/settlements/dead-letters' },
      { name: 'receipt', path: `/settlements/${encodeURIComponent(receipt.rows[0].receipt_id)}` },
      { name: 'bulk-replays', path: '/settlements/bulk' },
      { name: 'audit', path: '/audit' },
      { name: 'users', path: '/users' },
      { name: 'webhooks', path: '/webhooks' },
      { name: 'preferences', path: '/preferences' },
    ];
  } finally {
    await db.end();
  }
}

/**
 * Pages whose dark theme a full-width spec puts through axe
 * (console-pages, settlements, audit-users, rates, failure-detail).
 */
const DARK_CHECKED_AT_FULL_WIDTH = new Set([
  'overview',
  'rates',
  'executions',
  'execution',
  'retry-keys',
  'retry-keys-execution',
  'recovery',
  'proposal',
  'settlements',
  'dead-letters',
  'receipt',
  'bulk-replays',
  'audit',
  'users',
]);

async function expectNoSidewaysScroll(page: Page, what: string) {
  const { scrollWidth, clientWidth } = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    clientWidth: document.documentElement.clientWidth,
  }));
  expect(scrollWidth, `${what}: the page scrolls sideways`).toBeLessThanOrEqual(clientWidth);
}

/**
 * The element lies inside the viewport and inside its table's scroll box (the table's parent), without scrolling it.
 */
async function expectShownWithin(page: Page, element: Locator, box: Locator) {
  await element.scrollIntoViewIfNeeded();
  await box.evaluate((b) => (b.scrollLeft = 0));
  const el = (await element.boundingBox())!;
  const outer = (await box.boundingBox())!;
  const viewport = page.viewportSize()!;
  expect(el.x).toBeGreaterThanOrEqual(outer.x);
  expect(el.x + el.width).toBeLessThanOrEqual(Math.min(outer.x + outer.width, viewport.width) + 0.5);
}

test('at 390 px every console page fits the screen, in light and dark, and stays axe-clean', async ({ page }) => {
  // In dark, axe runs here only on pages no full-width spec checks in dark: the theme's colours
  // are the same at every width, and what the narrow layout can break (overflow, hidden
  // controls, names) is the same in both themes, which the light pass checks.
  test.setTimeout(360_000);
  await signIn(page, 'admin');
  const pages = await consolePages(page);
  for (const theme of ['light', 'dark'] as const) {
    for (const entry of pages) {
      await gotoInTheme(page, entry.path, theme);
      await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
      await expect(page.getByRole('button', { name: 'Menu' })).toHaveAttribute('aria-expanded', 'false');
      await expectNoSidewaysScroll(page, entry.path);
      if (theme === 'light' || !DARK_CHECKED_AT_FULL_WIDTH.has(entry.name)) await expectNoSeriousViolations(page);
      await captureScreenshot(page, `${entry.name}-390-${theme}`);
    }
  }
});

test('at 390 px the navigation folds behind a Menu button that works by keyboard', async ({ page }) => {
  await signIn(page, 'admin');
  const nav = page.getByRole('navigation', { name: 'Main' });
  const menu = page.getByRole('button', { name: 'Menu' });
  await expect(nav.getByRole('link', { name: 'Audit' })).toBeHidden();
  await expect(menu).toHaveAttribute('aria-controls', 'main-navigation');

  await menu.focus();
  await page.keyboard.press('Enter');
  await expect(menu).toHaveAttribute('aria-expanded', 'true');
  await expect(nav.getByRole('link', { name: 'Audit' })).toBeVisible();
  await expectNoSidewaysScroll(page, 'open navigation');
  await expectNoSeriousViolations(page);
  await page.keyboard.press('Space');
  await expect(menu).toHaveAttribute('aria-expanded', 'false');
  await expect(nav.getByRole('link', { name: 'Audit' })).toBeHidden();

  // Escape inside the open navigation folds it and puts focus back on the button.
  await page.keyboard.press('Enter');
  await nav.getByRole('link', { name: 'Overview' }).focus();
  await page.keyboard.press('Tab');
  await expect(nav.getByRole('link', { name: 'Rates' })).toBeFocused();
  await page.keyboard.press('Escape');
  await expect(menu).toHaveAttribute('aria-expanded', 'false');
  await expect(menu).toBeFocused();

  // Following a link folds it too.
  await page.keyboard.press('Enter');
  await nav.getByRole('link', { name: 'Audit' }).focus();
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(/\/audit$/);
  await expect(page.getByRole('heading', { level: 1, name: 'Audit' })).toBeVisible();
  await expect(menu).toHaveAttribute('aria-expanded', 'false');
  await expect(nav.getByRole('link', { name: 'Audit' })).toBeHidden();
});

test('at 390 px a confirmation dialog fits the screen; tables scroll in their own box, key column pinned', async ({
  page,
}) => {
  await signIn(page, 'admin');
  await page.goto('/settlements/dead-letters');
  const table = page.getByRole('table', { name: 'Dead letters' });
  const region = table.locator('xpath=..');
  // The table is wider than the phone; its box scrolls, the page does not, and the first column stays put.
  const { scrollWidth, clientWidth } = await region.evaluate((r) => ({
    scrollWidth: r.scrollWidth,
    clientWidth: r.clientWidth,
  }));
  expect(scrollWidth).toBeGreaterThan(clientWidth);
  const firstCell = table.locator('tbody tr').first().locator('td').first();
  const before = (await firstCell.boundingBox())!.x;
  await region.evaluate((r) => (r.scrollLeft = r.scrollWidth));
  expect((await firstCell.boundingBox())!.x).toBeCloseTo(before, 0);
  await expectNoSidewaysScroll(page, 'scrolled table');

  await table
    .getByRole('button', { name: /^Replay / })
    .first()
    .click();
  const dialog = page.getByRole('alertdialog');
  await expect(dialog).toBeVisible();
  await expect(dialog).toHaveAccessibleName(/^Replay/);
  const box = (await dialog.boundingBox())!;
  expect(box.x).toBeGreaterThanOrEqual(0);
  expect(box.y).toBeGreaterThanOrEqual(0);
  expect(box.x + box.width).toBeLessThanOrEqual(PHONE.width);
  expect(box.y + box.height).toBeLessThanOrEqual(PHONE.height);
  await expect(dialog.getByRole('button', { name: 'Cancel' })).toBeInViewport();
  await expectNoSidewaysScroll(page, 'open dialog');
  await expectNoSeriousViolations(page);
  await captureScreenshot(page, 'dialog-390-light');
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
});

test.describe('at 1440 px', () => {
  test.use({ viewport: { width: 1440, height: 900 } });

  test('the audit Outcome and Digest columns and the steps Fault state column are shown without scrolling', async ({
    page,
  }) => {
    await signIn(page, 'admin');
    await page.goto('/audit');
    const audit = page.getByRole('table', { name: 'Audit events' }).locator('xpath=..');
    for (const column of ['Outcome', 'Digest'])
      await expectShownWithin(page, audit.getByRole('columnheader', { name: column }), audit);
    const digest = audit.locator('tbody tr').first().locator('td').last();
    await expectShownWithin(page, digest, audit);

    const db = await e2eDatabase();
    let executionId: number;
    try {
      const { rows } = await db.query(`select s.job_execution_id as id from oxide_batch.ob_step_execution s
        join oxide_batch.ob_job_execution e on e.id = s.job_execution_id order by s.id desc limit 1`);
      executionId = Number(rows[0].id);
    } finally {
      await db.end();
    }
    await page.goto(`/executions/${executionId}`);
    const steps = page.getByRole('table', { name: 'Steps' }).locator('xpath=..');
    await expectShownWithin(page, steps.getByRole('columnheader', { name: 'Fault state' }), steps);
    await expectShownWithin(page, steps.locator('tbody tr').first().locator('td').last(), steps);

    await page.goto('/recovery');
    const leases = page.getByRole('table', { name: 'Orchestration leases' }).locator('xpath=..');
    const takeover = leases.getByRole('button', { name: 'Request takeover' });
    if ((await takeover.count()) > 0) await expectShownWithin(page, takeover.first(), leases);
    await expectShownWithin(page, leases.getByRole('columnheader', { name: 'Authentication' }), leases);
  });
});
