import { expect, test, type Page } from '@playwright/test';
import { e2eDatabase } from './support/database';
import { signIn } from './support/session';

/**
 * The URL is the one source of truth for a list's filters: after each Back or Forward
 * the address, the filter control and the rows say the same thing. The e2e server runs
 * without the demo runtime, so the test plays its part: before every step it writes to
 * the runtime's executions through the database (heartbeats that reorder the list and
 * make the console's live events fire), as the runtime does while people navigate.
 */
test('Back/Forward on a filtered list keep URL, filter control and rows equal (10 tries, rows being written)', async ({
  page,
}) => {
  const db = await e2eDatabase();
  try {
    const { rows } = await db.query<{ status: string }>(
      `select status from oxide_batch.ob_job_execution group by status having count(*) > 0
       order by count(*) desc, status limit 3`,
    );
    const statuses = rows.map((r) => r.status);
    expect(statuses.length).toBeGreaterThanOrEqual(2);
    let writes = 0;
    const heartbeat = async () => {
      writes += 1;
      await db.query(
        `update oxide_batch.ob_job_execution set updated_at = clock_timestamp(), version = version + 1
         where id in (select id from oxide_batch.ob_job_execution where status = any($1) order by updated_at limit 3)`,
        [statuses],
      );
    };

    await signIn(page, 'viewer');
    await page.goto('/executions');
    const status = page.getByRole('combobox', { name: 'Status', exact: true });
    // One history entry per filter.
    for (const s of statuses) {
      await heartbeat();
      await status.selectOption(s);
      await expectInStep(page, s);
    }

    // Back to the first filter, then Forward to the last, and again: 10 steps in all.
    const moves: ('back' | 'forward')[] = [];
    for (let i = 0; moves.length < 10; i += 1) {
      const direction = i % 2 === 0 ? 'back' : 'forward';
      for (let j = 0; j < statuses.length - 1 && moves.length < 10; j += 1) moves.push(direction);
    }
    let at = statuses.length - 1;
    for (const move of moves) {
      await heartbeat();
      if (move === 'back') {
        await page.goBack();
        at -= 1;
      } else {
        await page.goForward();
        at += 1;
      }
      await expectInStep(page, statuses[at]!);
    }
    expect(writes).toBe(statuses.length + 10);
  } finally {
    await db.end();
  }
});

/** The URL, the Status control and every row show `expected` (rows settle once the new filter's data is in). */
async function expectInStep(page: Page, expected: string) {
  await expect(page).toHaveURL(new RegExp(`[?&]status=${expected}(&|$)`));
  await expect(page.getByRole('combobox', { name: 'Status', exact: true })).toHaveValue(expected);
  const table = page.getByRole('table', { name: 'Executions' });
  await expect(async () => {
    const statuses = await table.locator('tbody tr td:nth-child(3)').allInnerTexts();
    expect(statuses.length).toBeGreaterThan(0);
    for (const text of statuses) expect(text).toContain(expected);
  }).toPass();
}
