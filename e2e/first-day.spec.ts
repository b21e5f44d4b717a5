import { expect, test } from '@playwright/test';
import { specDatabase } from './support/database';
import { DEMO_PASSWORD, signedInPages, toast } from './support/session';

/**
 * What a person meets on the first day: the sign-in form, the demo's stop requests in the audit log, a refused stop.
 */
const db = specDatabase(test);

const pageAs = signedInPages(test);

test('an empty sign-in form says what is missing without a request; a wrong password focuses the message', async ({
  page,
}) => {
  await page.goto('/sign-in');
  const signInRequests: string[] = [];
  page.on('request', (r) => {
    if (r.url().includes('/api/auth/sign-in')) signInRequests.push(r.url());
  });
  // Next's route announcer is an empty alert of its own; the form's message is the one with text.
  const message = page.getByRole('alert').filter({ hasText: /\S/ });
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await expect(message).toHaveText('Enter your username and password.');
  await expect(message).toBeFocused();
  await page.getByLabel('Username').fill('operator');
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await expect(message).toHaveText('Enter your username and password.');
  expect(signInRequests).toEqual([]);

  await page.getByLabel('Password').fill(`${DEMO_PASSWORD}-not`);
  const answer = page.waitForResponse((r) => r.url().includes('/api/auth/sign-in/username'));
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  expect((await answer).status()).toBe(401);
  await expect(message).toHaveText('Wrong username or password.');
  await expect(message).toBeFocused();
});

test('a demo stop asked through Keel is on the audit page with the operation id of its runtime request', async ({
  browser,
}) => {
  const seeded = await db.query<{ job_execution_id: string; operation_id: string }>(
    `select job_execution_id, operation_id from oxide_batch.ob_operator_request
     where action = 'STOP' and operation_id like 'keel-stop-demo-%' order by id limit 1`,
  );
  expect(seeded.rows).toHaveLength(1);
  const executionId = seeded.rows[0]!.job_execution_id;
  const admin = await pageAs(browser, 'admin');
  await admin.goto(`/audit?action=execution.request_stop&targetKind=batch_execution&targetId=${executionId}`);
  const rows = admin.getByRole('table', { name: 'Audit events' }).locator('tbody tr[data-audit-id]');
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toContainText('operator');
  await expect(rows.first()).toContainText('execution.request_stop');
  await expect(rows.first()).toContainText('APPLIED');
  const audited = await db.query(
    `select operation_id from keel.audit_event where action = 'execution.request_stop' and target_id = $1`,
    [executionId],
  );
  expect(audited.rows).toEqual([{ operation_id: seeded.rows[0]!.operation_id.slice('keel-stop-'.length) }]);
});

test('a refused stop closes its dialog and says why in a toast over the page as it now is', async ({ browser }) => {
  const { rows } = await db.query<{ id: string }>(
    `select id from oxide_batch.ob_job_execution where status = 'STARTED' and stop_requested_at is null
       and updated_at > clock_timestamp() - interval '10 minutes' order by id desc limit 1`,
  );
  const executionId = Number(rows[0]!.id);
  const operator = await pageAs(browser, 'operator');
  await operator.goto(`/executions/${executionId}`);
  await operator.getByRole('button', { name: 'Request stop' }).click();
  const dialog = operator.getByRole('alertdialog', { name: `Request stop of execution ${executionId}` });
  await expect(dialog).toBeVisible();
  // Meanwhile the runtime lost track of it: UNKNOWN cannot be asked to stop.
  await db.query(
    `update oxide_batch.ob_job_execution set status = 'UNKNOWN', version = version + 1, updated_at = clock_timestamp()
     where id = $1`,
    [executionId],
  );
  await dialog.getByRole('button', { name: 'Request stop' }).click();
  await expect(dialog).toBeHidden();
  await expect(toast(operator)).toContainText('Refused: INVALID_STATE');
  await expect(
    operator.getByRole('region', { name: 'Actions' }).getByRole('button', { name: 'Request stop' }),
  ).toHaveCount(0);
  await expect(operator.getByText('UNKNOWN').first()).toBeVisible();
});
