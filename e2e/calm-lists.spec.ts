import { expect, type Page, test } from '@playwright/test';
import { e2eDatabase, specDatabase } from './support/database';
import { signIn } from './support/session';

/**
 * Calm lists: rows someone is reading never move. While the pointer rests on the
 * executions list, or the page is scrolled into it, rows the test writes wait behind
 * "Updates waiting (n)": no row of the table changes meanwhile, not one DOM node.
 * The e2e server runs without the demo runtime: the test writes the runtime's rows.
 */

const db = specDatabase(test);
const inserted: string[] = [];
// Other specs count the seeded executions (2,000): the ones written here go again (on a client of its own,
// whatever order the after-all hooks run in).
test.afterAll(async () => {
  const client = await e2eDatabase();
  try {
    const { rows } = await client.query<{ instance: string }>(
      `delete from oxide_batch.ob_job_execution where id = any($1::bigint[])
       returning job_instance_id::text as instance`,
      [inserted],
    );
    await client.query('delete from oxide_batch.ob_job_instance where id = any($1::bigint[])', [
      rows.map((r) => r.instance),
    ]);
  } finally {
    await client.end();
  }
});

/** New executions, as the runtime inserts them: each is the most recently updated, so the list's new top rows. */
async function insertExecutions(count: number): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `with def as (select id, job_name from oxide_batch.ob_job_definition order by id limit 1),
     inst as (
       insert into oxide_batch.ob_job_instance (job_name, instance_key)
       select def.job_name, decode(md5(random()::text) || md5(random()::text), 'hex') from def, generate_series(1, $1)
       returning id)
     insert into oxide_batch.ob_job_execution (job_instance_id, definition_id, attempt, status, started_at, ended_at,
       updated_at, version)
     select inst.id, def.id, 1, 'COMPLETED', clock_timestamp(), clock_timestamp(), clock_timestamp(), 1 from inst, def
     returning id::text`,
    [count],
  );
  inserted.push(...rows.map((r) => r.id));
  return rows.map((r) => r.id);
}

const table = (page: Page) => page.getByRole('table', { name: 'Executions' });
const executionIds = (page: Page) => table(page).locator('tbody tr td:first-child').allTextContents();
const waiting = (page: Page) => page.getByRole('button', { name: /^Updates waiting \(\d+\)$/ });

async function liveExecutions(page: Page) {
  await signIn(page, 'viewer');
  await page.goto('/executions');
  await expect(page.getByTestId('live-status')).toHaveAttribute('data-mode', 'live');
  await expect(table(page).locator('tbody tr')).toHaveCount(50);
}

/** Counts every change under the table's body from now on. */
const watchRows = (page: Page) =>
  table(page).evaluate((element) => {
    const seen = window as unknown as { rowChanges: number };
    seen.rowChanges = 0;
    new MutationObserver((changes) => {
      seen.rowChanges += changes.length;
    }).observe(element.querySelector('tbody')!, {
      subtree: true,
      childList: true,
      characterData: true,
      attributes: true,
    });
  });
const rowChanges = (page: Page) => page.evaluate(() => (window as unknown as { rowChanges: number }).rowChanges);

test('hovered rows held while rows are written from the test; Updates waiting applies them', async ({ page }) => {
  await liveExecutions(page);
  const row = table(page).locator('tbody tr').nth(2);
  const box = (await row.boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  const before = await executionIds(page);
  await watchRows(page);

  const waitingRows = async () => Number((await waiting(page).textContent())?.replace(/\D/g, ''));
  const added = await insertExecutions(3);
  await expect(waiting(page)).toBeVisible();
  const first = await waitingRows(); // the new rows, and as many gone from the page's end
  const more = await insertExecutions(2);
  await expect.poll(waitingRows).toBeGreaterThan(first);

  // The pointer never moved: the row under it is where it was, every row as it was, not one node changed.
  expect(await row.boundingBox()).toEqual(box);
  expect(await executionIds(page)).toEqual(before);
  expect(await rowChanges(page)).toBe(0);
  await expect(page.getByRole('status').filter({ hasText: 'Updates waiting for Executions' })).toBeAttached();

  // From the keyboard, the button applies them: the new rows come to the top.
  await waiting(page).focus();
  await page.keyboard.press('Enter');
  await expect.poll(async () => (await executionIds(page)).slice(0, 5).sort()).toEqual([...added, ...more].sort());
  await expect(waiting(page)).toHaveCount(0);
});

test('a list scrolled into holds its rows; scrolled back to its top, they apply', async ({ page }) => {
  await liveExecutions(page);
  await page.mouse.move(2, 2); // off the table
  const top = await table(page).evaluate((element) => element.getBoundingClientRect().top + window.scrollY);
  await page.evaluate((y) => window.scrollTo(0, y + 300), top);
  const before = await executionIds(page);
  await watchRows(page);

  const added = await insertExecutions(2);
  // The button stays in sight while the list is scrolled.
  await expect(waiting(page)).toBeInViewport();
  expect(await executionIds(page)).toEqual(before);
  expect(await rowChanges(page)).toBe(0);

  await page.evaluate(() => window.scrollTo(0, 0));
  await expect.poll(async () => (await executionIds(page)).slice(0, 2).sort()).toEqual([...added].sort());
  await expect(waiting(page)).toHaveCount(0);
});

test('rows that arrive live cost the server nothing of their own: their links are not prefetched', async ({ page }) => {
  // Next.js prefetches a link's route when it comes into view or is hovered: on a list that brings
  // new rows every second, each would be a request to the server, for every open tab.
  const prefetched: string[] = [];
  page.on('request', (request) => {
    if (request.headers()['next-router-prefetch'] === '1') prefetched.push(new URL(request.url()).pathname);
  });
  // The shell's own links still prefetch, so this browser does prefetch.
  const shellPrefetch = page.waitForRequest((request) => request.headers()['next-router-prefetch'] === '1');
  await liveExecutions(page);
  await shellPrefetch;
  await page.mouse.move(2, 2); // off the table: new rows apply at once

  const [newest] = (await insertExecutions(2)).sort((a, b) => Number(b) - Number(a));
  const link = table(page).getByRole('link', { name: newest, exact: true });
  await expect(link).toBeVisible();
  await link.hover();
  await link.click();
  await expect(page).toHaveURL(new RegExp(`/executions/${newest}$`));
  await expect(page.getByRole('heading', { level: 1 })).toContainText(newest!);

  expect(prefetched.length).toBeGreaterThan(0);
  expect(prefetched.filter((path) => /^\/executions\/\d+$/.test(path))).toEqual([]);
});
