import { expect, test, type Page } from '@playwright/test';
import { specDatabase, type SpecDatabase } from './support/database';
import { signIn } from './support/session';

/**
 * The header's refresh control: paused sends no request at all, the choice is
 * remembered, and live changes never move rows under an open dialog or a focused
 * text field (they wait behind "Updates waiting"), nor clear what was typed.
 * The e2e server runs without the demo runtime: the test writes the runtime's
 * heartbeats itself, each moving the oldest executions to the top of the list.
 */

/** Touches the three least recently updated executions; returns their ids, now the newest. */
async function heartbeat(db: SpecDatabase): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `update oxide_batch.ob_job_execution set updated_at = clock_timestamp(), version = version + 1
     where id in (select id from oxide_batch.ob_job_execution order by updated_at, id limit 3) returning id::text`,
  );
  return rows.map((r) => r.id);
}

const db = specDatabase(test);

/** The executions list as a viewer sees it with live updates on; returns the "Updates waiting" button. */
async function liveExecutions(page: Page) {
  await signIn(page, 'viewer');
  await page.goto('/executions');
  await expect(page.getByTestId('live-status')).toHaveAttribute('data-mode', 'live');
  return page.getByRole('button', { name: 'Updates waiting', includeHidden: true });
}

const executionIds = (page: Page) =>
  page.getByRole('table', { name: 'Executions' }).locator('tbody tr td:first-child').allInnerTexts();

test('paused sends no API request for 30 s while rows are written, and is remembered; live reads again', async ({
  page,
}) => {
  await page.clock.install();
  await signIn(page, 'operator');
  await page.goto('/executions');
  // The stream open shows the header hydrated: a choice made before that would be the DOM's only.
  await expect(page.getByTestId('live-status')).toHaveAttribute('data-mode', 'live');
  await page.getByRole('combobox', { name: 'Refresh' }).selectOption('paused');
  await expect(page.getByTestId('live-status')).toHaveAttribute('data-mode', 'paused');
  await page.reload();
  await expect(page.getByRole('combobox', { name: 'Refresh' })).toHaveValue('paused');
  await expect(page.getByTestId('live-status')).toHaveAttribute('data-mode', 'paused');

  const requests: string[] = [];
  page.on('request', (request) => {
    if (new URL(request.url()).pathname.startsWith('/api/')) requests.push(request.url());
  });
  for (let second = 0; second < 30; second += 1) {
    if (second % 5 === 0) await heartbeat(db);
    await page.clock.runFor(1_000);
  }
  await page.evaluate(() => window.dispatchEvent(new Event('focus')));
  await page.clock.runFor(1_000);
  expect(requests).toEqual([]);

  // Back to live: the stream opens and the next write is read once.
  await page.getByRole('combobox', { name: 'Refresh' }).selectOption('live');
  await expect(page.getByTestId('live-status')).toHaveAttribute('data-mode', 'live');
  await heartbeat(db);
  await expect
    .poll(async () => {
      await page.clock.runFor(500);
      return requests.filter((url) => new URL(url).pathname === '/api/executions').length;
    })
    .toBeGreaterThan(0);
});

test('no row moves under a focused filter field or an open dialog while rows are written; typed text stays', async ({
  page,
}) => {
  const waiting = await liveExecutions(page);

  // A focused text field: the rows hold still and the typed text stays.
  const search = page.getByLabel('Search (execution or instance id)');
  await search.fill('12');
  const before = await executionIds(page);
  const moved = await heartbeat(db);
  await expect(waiting).toBeVisible();
  expect(await executionIds(page)).toEqual(before);
  await expect(search).toHaveValue('12');
  await search.blur();
  await expect(waiting).toHaveCount(0);
  await expect.poll(async () => (await executionIds(page)).slice(0, 3).sort()).toEqual([...moved].sort());
  await expect(search).toHaveValue('12');

  // An open dialog: the same.
  await page.getByRole('heading', { name: 'Executions' }).click();
  await page.keyboard.press('?');
  const dialog = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
  await expect(dialog).toBeVisible();
  const underDialog = await executionIds(page);
  const movedAgain = await heartbeat(db);
  await expect(waiting).toBeAttached();
  expect(await executionIds(page)).toEqual(underDialog);
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
  await expect.poll(async () => (await executionIds(page)).slice(0, 3).sort()).toEqual([...movedAgain].sort());
});

test('no row moves under the pointer while rows are written; they move once the pointer leaves the table', async ({
  page,
}) => {
  const waiting = await liveExecutions(page);
  const row = page.getByRole('table', { name: 'Executions' }).locator('tbody tr').nth(2);
  const box = (await row.boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  const before = await executionIds(page);
  const moved = await heartbeat(db);
  // A person reading a row moves the pointer now and then; so does the test while the change arrives.
  let nudge = 0;
  await expect
    .poll(async () => {
      nudge = (nudge + 1) % 4;
      await page.mouse.move(box.x + box.width / 2 + nudge, box.y + box.height / 2);
      return waiting.count();
    })
    .toBe(1);
  expect(await executionIds(page)).toEqual(before);
  await page.mouse.move(5, 5);
  await expect.poll(async () => (await executionIds(page)).slice(0, 3).sort()).toEqual([...moved].sort());
});
