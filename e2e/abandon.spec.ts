import { expect, test } from '@playwright/test';
import { specDatabase } from './support/database';
import { signedInPages, toast } from './support/session';

test.describe.configure({ mode: 'serial' });

const db = specDatabase(test);

const pageAs = signedInPages(test);

test('approver proposes abandoning a FAILED execution, approver2 confirms, the execution shows ABANDONED', async ({
  browser,
}) => {
  const { rows } = await db.query<{ id: string; version: string }>(
    `select e.id, e.version from oxide_batch.ob_job_execution e
     where e.status = 'FAILED'
       and not exists (select 1 from keel.recovery_proposal p where p.target_kind = 'batch'
       and p.target_id = e.id::text)
     order by e.id limit 1`,
  );
  const executionId = Number(rows[0]!.id);
  const version = Number(rows[0]!.version);

  const approver = await pageAs(browser, 'approver');
  await approver.goto(`/executions/${executionId}`);
  await approver.getByRole('button', { name: 'Propose abandon' }).click();
  await approver
    .getByRole('alertdialog')
    .getByLabel('Reason for the request')
    .fill('Its input file was withdrawn; nobody will rerun it.');
  await approver.getByRole('alertdialog').getByRole('button', { name: 'Create abandon proposal' }).click();
  await expect(approver).toHaveURL(/\/recovery\/\d+$/);
  const proposalId = Number(new URL(approver.url()).pathname.split('/').pop());
  await expect(approver.getByText('PENDING').first()).toBeVisible();

  const approver2 = await pageAs(browser, 'approver2');
  await approver2.goto(`/recovery/${proposalId}`);
  await approver2.getByRole('button', { name: 'Confirm abandon' }).click();
  await approver2.getByRole('alertdialog').getByRole('button', { name: 'Confirm abandon' }).click();
  await expect(toast(approver2)).toContainText('Abandon applied: execution is now ABANDONED');

  await approver2.goto(`/executions/${executionId}`);
  await expect(approver2.getByRole('heading', { level: 1 })).toHaveText(`Execution ${executionId}`);
  await expect(approver2.getByText(`version ${version + 1}`)).toBeVisible();
  await expect(approver2.getByText('ABANDONED').first()).toBeVisible();
  const request = await db.query(
    `select action, authorization_class, outcome_class, actor_ref, prior_status, result_status
     from oxide_batch.ob_operator_request where job_execution_id = $1 and operation_id like 'keel-%'`,
    [executionId],
  );
  // Keel wrote exactly one request (the demo seed's LAUNCH by the runtime CLI stays beside it).
  expect(request.rows).toEqual([
    {
      action: 'ABANDON',
      authorization_class: 'DESTRUCTIVE',
      outcome_class: 'APPLIED',
      actor_ref: 'approver2',
      prior_status: 'FAILED',
      result_status: 'ABANDONED',
    },
  ]);
});

test('an operator requests a stop: the dialog carries an operation id and the version stays', async ({ browser }) => {
  const { rows } = await db.query<{ id: string; version: string }>(
    `select id, version from oxide_batch.ob_job_execution
     where status = 'STARTED' and stop_requested_at is null order by id limit 1`,
  );
  const executionId = Number(rows[0]!.id);
  const operator = await pageAs(browser, 'operator');
  await operator.goto(`/executions/${executionId}`);
  await operator.getByRole('button', { name: 'Request stop' }).click();
  const dialog = operator.getByRole('alertdialog');
  const operationId = (await dialog.getByTestId('stop-operation-id').textContent()) ?? '';
  expect(operationId).toMatch(/^[0-9a-f-]{36}$/);
  await dialog.getByRole('button', { name: 'Request stop' }).click();
  await expect(toast(operator)).toContainText('Stop requested');
  const after = await db.query(`select version, stop_requested_by from oxide_batch.ob_job_execution where id = $1`, [
    executionId,
  ]);
  expect(Number(after.rows[0].version)).toBe(Number(rows[0]!.version));
  expect(after.rows[0].stop_requested_by).toBe('operator');
  const requests = await db.query(
    `select operation_id from oxide_batch.ob_operator_request where job_execution_id = $1 and action = 'STOP'`,
    [executionId],
  );
  expect(requests.rows).toEqual([{ operation_id: `keel-stop-${operationId}` }]);
});
