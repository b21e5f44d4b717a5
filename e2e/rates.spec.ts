import { expect, test } from '@playwright/test';
import { expectNoSeriousViolations, gotoInTheme } from './support/axe';
import { specDatabase } from './support/database';
import { signIn } from './support/session';
import { captureScreenshot } from './support/screenshots';

test.use({ viewport: { width: 1440, height: 900 } });
test.describe.configure({ mode: 'serial' });

const db = specDatabase(test);
// Dead letters of this spec's own, so the bulk replay takes nothing another spec counts on.
const PREFIX = 'e2e-rates-';

test('a chart with a marker after a bulk replay', async ({ page }) => {
  test.setTimeout(120_000);
  for (const i of [1, 2, 3]) {
    await db.query(
      `insert into settle.dead_letters (receipt_id, finalized_at, attempts, reason, canonical_json, recorded_at_ms)
       values ($1, 1, 1, 'invalid_observation', '{}', (extract(epoch from clock_timestamp()) * 1000)::bigint)`,
      [`${PREFIX}${i}`],
    );
  }
  await signIn(page, 'support');
  await page.goto(`/settlements/dead-letters?q=${PREFIX}`);
  await expect(page.getByTestId('dead-letter-count')).toHaveText('3 dead letters match');
  await page.getByRole('button', { name: 'Bulk replay these…' }).click();
  const dialog = page.getByRole('alertdialog');
  await dialog.getByLabel(/Note/).fill('signer key rotated; replaying');
  await dialog.getByRole('button', { name: 'Preview' }).click();
  await expect(dialog.getByTestId('bulk-preview-count')).toContainText('Exactly 3 dead letters were frozen');
  await dialog.getByRole('button', { name: 'Replay 3 dead letters' }).click();
  await expect(page).toHaveURL(/\/settlements\/bulk\/\d+$/);
  const job = Number(new URL(page.url()).pathname.split('/').pop());
  await expect(page.getByTestId('bulk-status')).toHaveText('COMPLETED', { timeout: 20_000 });

  // Reached from the navigation, as a user finds it.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Rates' }).click();
  await expect(page).toHaveURL(/\/rates$/);
  await expect(page.getByRole('heading', { level: 1, name: 'Rates' })).toBeVisible();
  await expect(page.getByRole('navigation', { name: 'Range' }).getByRole('link', { name: '1 h' })).toHaveAttribute(
    'aria-current',
    'page',
  );
  const label = `Bulk replay ${job} of 3 dead letters started by support`;
  // The audit log's event, listed in words and linked to the job...
  const listed = page.getByTestId('rate-marker').filter({ hasText: label });
  await expect(listed).toHaveCount(1);
  await expect(listed.getByRole('link', { name: label })).toHaveAttribute('href', `/settlements/bulk/${job}`);
  // ...and drawn as a dashed line on every chart; pointing at it names it beside the values of that minute.
  const finished = page.locator('figure[data-chart="settlements_finished"]');
  // This spec's own job: other specs' bulk replays of the last hour are drawn too.
  const ours = `[data-testid="chart-marker"][data-kind="bulk"][data-label="${label}"]`;
  const marker = finished.locator(ours);
  await expect(marker).toHaveCount(1);
  const line = (await marker.boundingBox())!;
  await page.mouse.move(line.x + line.width / 2 - 2, line.y + line.height / 2);
  const readout = finished.getByTestId('chart-readout');
  await expect(readout).toContainText(label);
  // A minute that closed just before the page opened is counted by the sampler's next pass (every
  // 15 s), whose `metrics` announcement makes the page read again: the readout then has a figure.
  await expect(readout).toHaveText(/\d{4}-\d{2}-\d{2} \d{2}:\d{2}–\d{2}:\d{2} UTC: Settlements finished \d+/, {
    timeout: 25_000,
  });

  // A value on hover: the seeded retries of the last hour, minute by minute (then the labels of
  // that minute's markers, which other specs' actions may have put there).
  const retried = page.locator('figure[data-chart="settlements_retried"]');
  const value = /UTC: Settlements retried \d+( · .+)?$/;
  const box = (await retried.locator('.u-over').boundingBox())!;
  await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.5);
  await expect(retried.getByTestId('chart-readout')).toHaveText(value);
  // The keyboard moves the same readout a minute at a time.
  const chart = retried.getByRole('img', { name: /^Settlements retried, per minute/ });
  await chart.focus();
  await page.keyboard.press('End');
  const last = await retried.getByTestId('chart-readout').textContent();
  await page.keyboard.press('ArrowLeft');
  await expect(retried.getByTestId('chart-readout')).not.toHaveText(last!);
  await expect(retried.getByTestId('chart-readout')).toHaveText(value);

  // 24 h is drawn by minute, 7 d by hour; the marker stays on both.
  await page.getByRole('navigation', { name: 'Range' }).getByRole('link', { name: '24 h' }).click();
  await expect(page).toHaveURL(/\/rates\?range=24h$/);
  await expect(finished.getByRole('img')).toHaveAccessibleName(/^Settlements finished, per minute, /);
  await expect(finished.locator(ours)).toHaveCount(1);
  await page.getByRole('navigation', { name: 'Range' }).getByRole('link', { name: '7 d' }).click();
  await expect(page).toHaveURL(/\/rates\?range=7d$/);
  await expect(finished.getByRole('img')).toHaveAccessibleName(/^Settlements finished, per hour, /);
  await expect(finished.locator(ours)).toHaveCount(1);
  await expect(page.getByText('Samples are kept for 2 days')).toBeVisible();
  // A range Keel does not offer is refused in words, as the API refuses it.
  await page.goto('/rates?range=2d');
  await expect(page.getByTestId('filter-problems')).toHaveText('Range must be one of 1h, 24h, 7d.');
  expect((await page.request.get('/api/rates?range=2d')).status()).toBe(400);
});

test('the rates page has no serious accessibility violations, light and dark', async ({ page }) => {
  await signIn(page, 'viewer');
  for (const theme of ['light', 'dark'] as const) {
    await gotoInTheme(page, '/rates', theme);
    await expect(page.getByRole('heading', { level: 1, name: 'Rates' })).toBeVisible();
    // Every chart drawn before judging or capturing the page.
    await expect(page.locator('.u-over')).toHaveCount(7);
    await expectNoSeriousViolations(page);
    await captureScreenshot(page, `rates-${theme}`, { fullPage: true });
  }
});
