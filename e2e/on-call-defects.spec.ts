import { expect, test } from '@playwright/test';
import { specDatabase } from './support/database';
import { signedInPages, toast } from './support/session';

/** What an on-call engineer met in the console, each checked the way they met it, at 1440 x 900. */
const VIEWPORT = { width: 1440, height: 900 };
test.use({ viewport: VIEWPORT });
test.describe.configure({ mode: 'serial' });

const db = specDatabase(test);
const pageAs = signedInPages(test);

test('a refusal toast is an alert of its own, announced at once rather than after the polite queue', async ({ browser }) => {
  const { rows } = await db.query<{ receipt_id: string }>(`select receipt_id from settle.dead_letters where reason = 'backend' order by receipt_id limit 1`);
  const receipt = rows[0]!.receipt_id;
  const support = await pageAs(browser, 'support');
  await support.goto(`/settlements/dead-letters?q=${receipt}`);
  await support.getByRole('button', { name: `Replay ${receipt}` }).click();
  const dialog = support.getByRole('alertdialog');
  await dialog.getByLabel(/Note/).fill('backend fixed');
  // Someone else replays it first.
  await db.query(`delete from settle.dead_letters where receipt_id = $1`, [receipt]);
  await dialog.getByRole('button', { name: 'Replay dead letter' }).click();
  const alert = toast(support).getByRole('alert');
  await expect(alert).toContainText('Refused: CONFLICT');
  await expect(alert).toContainText('not dead-lettered');
  // The alert is its own live region: nothing polite stands between it and the screen reader.
  expect(await alert.evaluate((el) => el.closest('[aria-live], [role="alert"], [role="status"], [role="log"]') === el)).toBe(true);
});
