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

/** Stale STARTED executions nobody has proposed yet, by the server's clock. */
async function staleExecution(): Promise<number> {
  const { rows } = await db.query<{ id: string }>(
    `select e.id from oxide_batch.ob_job_execution e
     where e.status = 'STARTED' and e.updated_at < clock_timestamp() - interval '30 minutes'
       and not exists (select 1 from keel.recovery_proposal p where p.target_kind = 'batch' and p.target_id = e.id::text)
     order by e.id desc limit 1`,
  );
  return Number(rows[0]!.id);
}

test('the bulk dialog reads as sentences, and a refusal shown beside its field is not repeated in a toast', async ({ browser }) => {
  const support = await pageAs(browser, 'support');
  await support.goto('/settlements/dead-letters?reason=unsupported');
  await support.getByRole('button', { name: 'Bulk replay these…' }).click();
  await expect(support.getByRole('alertdialog')).toContainText('Nothing is replayed until you start it;');
  await support.getByRole('alertdialog').getByRole('button', { name: 'Cancel' }).click();

  const executionId = await staleExecution();
  const operator = await pageAs(browser, 'operator');
  await operator.goto(`/executions/${executionId}`);
  await operator.getByRole('button', { name: 'Request takeover' }).click();
  const dialog = operator.getByRole('alertdialog');
  await dialog.getByRole('button', { name: 'Create proposal' }).click();
  await expect(dialog.getByRole('alert')).toHaveText('Say why the takeover is needed: the approver reads it before deciding.');
  await dialog.getByLabel('Reason for the request').fill('The worker host stopped answering.');
  await dialog.getByRole('button', { name: 'Create proposal' }).click();
  await expect(operator).toHaveURL(/\/recovery\/\d+$/);
  // Toasts stay on the page across the navigation, and a refusal's until dismissed: only the success is there.
  await expect(toast(operator)).toContainText(/Proposal \d+ created/);
  await expect(operator.getByTestId('toast')).toHaveCount(1);
});
