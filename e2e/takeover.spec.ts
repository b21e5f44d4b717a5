import { expect, test, type Page, type Request } from '@playwright/test';
import { specDatabase } from './support/database';
import { signedInPages, signIn, toast } from './support/session';

test.describe.configure({ mode: 'serial' });

const db = specDatabase(test);

/** Stale STARTED executions nobody has proposed yet, by the server's clock. */
async function staleExecutions(count: number): Promise<number[]> {
  const { rows } = await db.query<{ id: string }>(
    `select e.id from oxide_batch.ob_job_execution e
     where e.status = 'STARTED' and e.updated_at < clock_timestamp() - interval '30 minutes'
       and not exists (select 1 from keel.recovery_proposal p where p.target_kind = 'batch'
       and p.target_id = e.id::text)
     order by e.id limit $1`,
    [count],
  );
  return rows.map((r) => Number(r.id));
}

const pageAs = signedInPages(test);

async function proposeThroughPage(page: Page, executionId: number): Promise<number> {
  await page.goto(`/executions/${executionId}`);
  await page.getByRole('button', { name: 'Request takeover' }).click();
  await page.getByRole('alertdialog').getByLabel('Reason for the request').fill('The worker host stopped answering.');
  await page.getByRole('alertdialog').getByRole('button', { name: 'Create proposal' }).click();
  await expect(page).toHaveURL(/\/recovery\/\d+$/);
  return Number(new URL(page.url()).pathname.split('/').pop());
}

async function confirmThroughPage(page: Page, proposalId: number): Promise<void> {
  await page.goto(`/recovery/${proposalId}`);
  await page.getByRole('button', { name: 'Confirm takeover' }).click();
  const dialog = page.getByRole('alertdialog');
  // The dialog loads when it first opens: wait for it before asking whether it holds a checkbox.
  await expect(dialog).toBeVisible();
  const ack = dialog.getByRole('checkbox');
  if (await ack.isVisible()) await ack.check();
  await dialog.getByRole('button', { name: 'Confirm takeover' }).click();
}

test('an operator proposes, a different approver confirms, and the execution shows the decision', async ({
  browser,
}) => {
  const [executionId] = await staleExecutions(1);
  const operator = await pageAs(browser, 'operator');
  const proposalId = await proposeThroughPage(operator, executionId!);
  await expect(operator.getByText('PENDING').first()).toBeVisible();
  await expect(operator.getByTestId('evidence-digest')).toHaveText(/^[0-9a-f]{64}$/);
  await expect(operator.getByTestId('deadline')).toContainText('left');

  const approver = await pageAs(browser, 'approver');
  await confirmThroughPage(approver, proposalId);
  await expect(toast(approver)).toContainText('Takeover applied: execution is now FAILED');

  await approver.goto(`/executions/${executionId}`);
  await expect(approver.getByRole('heading', { level: 1 })).toHaveText(`Execution ${executionId}`);
  const decisions = approver.getByRole('table', { name: 'Recovery decisions' });
  await expect(decisions.getByRole('row')).toHaveCount(2);
  await expect(decisions).toContainText('FAILED');
  await expect(decisions).toContainText(`keel:proposal:${proposalId}`);
  await expect(approver.getByRole('table', { name: 'Recovery proposals' })).toContainText('APPROVED');
  const row = await db.query(
    `select status, failure_category, failure_id::int as failure_id from oxide_batch.ob_job_execution where id = $1`,
    [executionId],
  );
  expect(row.rows[0]).toEqual({ status: 'FAILED', failure_category: 'STALE_RECOVERED', failure_id: proposalId });
});

test('a takeover request needs a reason: empty is refused, creating nothing; a given one reaches the approver', async ({
  browser,
}) => {
  const [executionId] = await staleExecutions(1);
  const operator = await pageAs(browser, 'operator');
  await operator.goto(`/executions/${executionId}`);
  await operator.getByRole('button', { name: 'Request takeover' }).click();
  const dialog = operator.getByRole('alertdialog');
  await dialog.getByRole('button', { name: 'Create proposal' }).click();
  await expect(dialog.getByRole('alert')).toHaveText(
    'Say why the takeover is needed: the approver reads it before deciding.',
  );
  await expect(dialog.getByLabel('Reason for the request')).toHaveAttribute('aria-invalid', 'true');
  await expect(operator).toHaveURL(new RegExp(`/executions/${executionId}$`));
  const none = await db.query(
    `select count(*)::int as n from keel.recovery_proposal where target_kind = 'batch' and target_id = $1`,
    [String(executionId)],
  );
  expect(none.rows[0].n).toBe(0);

  await dialog
    .getByLabel('Reason for the request')
    .fill('Worker host batch-7 lost power at 06:10; nobody is running it.');
  await dialog.getByRole('button', { name: 'Create proposal' }).click();
  await expect(operator).toHaveURL(/\/recovery\/\d+$/);
  const proposalId = Number(new URL(operator.url()).pathname.split('/').pop());

  const approver = await pageAs(browser, 'approver');
  await approver.goto(`/recovery/${proposalId}`);
  const summary = approver.getByRole('region', { name: 'Proposal' });
  await expect(summary).toContainText('Reason for the request');
  await expect(summary).toContainText('Worker host batch-7 lost power at 06:10; nobody is running it.');
  const audit = await db.query(
    `select reason from keel.audit_event where action = 'recovery.propose' and operation_id = $1`,
    [`keel-proposal-${proposalId}`],
  );
  expect(audit.rows).toEqual([{ reason: 'Worker host batch-7 lost power at 06:10; nobody is running it.' }]);

  // A proposal made before reasons were asked for has none: the page says so.
  await db.query(`update keel.recovery_proposal set proposer_note = null where id = $1`, [proposalId]);
  await approver.reload();
  await expect(summary).toContainText('no reason given');
});

test('an admin who proposed sees why they cannot decide it, before submitting anything', async ({ browser }) => {
  const [executionId] = await staleExecutions(1);
  const admin = await pageAs(browser, 'admin');
  const proposalId = await proposeThroughPage(admin, executionId!);
  await admin.goto(`/recovery/${proposalId}`);
  const decision = admin.getByRole('region', { name: 'Decision' });
  await expect(decision.getByRole('button', { name: 'Confirm takeover' })).toBeDisabled();
  await expect(decision.getByRole('button', { name: 'Reject' })).toBeDisabled();
  await expect(decision.getByRole('button', { name: 'Confirm takeover' })).toHaveAccessibleDescription(
    /another approver or admin must confirm or reject it \(four eyes, FOUR_EYES_REQUIRED\)/,
  );
  await expect(decision.getByRole('button', { name: 'Cancel proposal' })).toBeEnabled();
  const proposal = await db.query(`select status from keel.recovery_proposal where id = $1`, [proposalId]);
  expect(proposal.rows[0].status).toBe('PENDING');
});

test('a confirm after the evidence changed is refused with RECOVERY_EVIDENCE_STALE', async ({ browser }) => {
  const [executionId] = await staleExecutions(1);
  const operator = await pageAs(browser, 'operator');
  const proposalId = await proposeThroughPage(operator, executionId!);
  const approver = await pageAs(browser, 'approver2');
  await approver.goto(`/recovery/${proposalId}`);
  // The runtime writes in between: a heartbeat moves updated_at and the version.
  await db.query(
    `update oxide_batch.ob_job_execution set version = version + 1, updated_at = updated_at + interval '1 second'
     where id = $1`,
    [executionId],
  );
  await approver.getByRole('button', { name: 'Confirm takeover' }).click();
  const dialog = approver.getByRole('alertdialog');
  await expect(dialog).toBeVisible();
  const ack = dialog.getByRole('checkbox');
  if (await ack.isVisible()) await ack.check();
  await dialog.getByRole('button', { name: 'Confirm takeover' }).click();
  await expect(toast(approver)).toContainText('Refused: RECOVERY_EVIDENCE_STALE');
  const after = await db.query(
    `select p.status, e.status as execution_status from keel.recovery_proposal p join oxide_batch.ob_job_execution e
     on e.id::text = p.target_id where p.id = $1`,
    [proposalId],
  );
  expect(after.rows[0]).toEqual({ status: 'SUPERSEDED', execution_status: 'STARTED' });
});

test('a non-candidate says why: NOT_RECOVERABLE for a finished execution, NOT_STALE for a live one', async ({
  browser,
}) => {
  const operator = await pageAs(browser, 'operator');
  const completed = await db.query(
    `select id from oxide_batch.ob_job_execution where status = 'COMPLETED' order by id limit 1`,
  );
  await operator.goto(`/executions/${completed.rows[0].id}`);
  await expect(operator.getByTestId('not-candidate')).toContainText('NOT_RECOVERABLE');
  const live =
    await db.query(`update oxide_batch.ob_job_execution set updated_at = clock_timestamp(), version = version + 1
    where id = (select min(id) from oxide_batch.ob_job_execution where status = 'STARTED'
      and not exists (select 1 from keel.recovery_proposal p
                      where p.target_id = ob_job_execution.id::text and p.status = 'PENDING')) returning id`);
  await operator.goto(`/executions/${live.rows[0].id}`);
  await expect(operator.getByTestId('not-candidate')).toContainText('NOT_STALE');
  await expect(operator.getByTestId('not-candidate')).toContainText(
    /Inactive for (\d+ ms|\d+ s( \d+ ms)?), which is not above the 15 min threshold/,
  );
});

test('a viewer sees no mutation buttons; a forged action from its session is refused and changes nothing', async ({
  browser,
  baseURL,
}) => {
  const [executionId, other] = await staleExecutions(2);
  // Capture the real propose action as the operator's browser sends it.
  const operator = await pageAs(browser, 'operator');
  await operator.goto(`/executions/${executionId}`);
  await operator.getByRole('button', { name: 'Request takeover' }).click();
  await operator
    .getByRole('alertdialog')
    .getByLabel('Reason for the request')
    .fill('The worker host stopped answering.');
  const [request] = await Promise.all([
    operator.waitForRequest((r: Request) => r.method() === 'POST' && Boolean(r.headers()['next-action'])),
    operator.getByRole('alertdialog').getByRole('button', { name: 'Create proposal' }).click(),
  ]);
  const headers = await request.allHeaders();
  await expect(operator).toHaveURL(/\/recovery\/\d+$/);
  const pendingId = Number(new URL(operator.url()).pathname.split('/').pop());

  const viewer = await pageAs(browser, 'viewer');
  await viewer.goto(`/executions/${other}`);
  await expect(viewer.getByRole('heading', { level: 1 })).toHaveText(`Execution ${other}`);
  await expect(viewer.getByRole('button', { name: 'Request takeover' })).toHaveCount(0);
  await expect(viewer.getByRole('button', { name: 'Request stop' })).toHaveCount(0);
  await viewer.goto(`/recovery/${pendingId}`);
  await expect(viewer.getByRole('button', { name: 'Confirm takeover' })).toHaveCount(0);
  await expect(viewer.getByRole('button', { name: 'Reject' })).toHaveCount(0);

  const before = await db.query(`select count(*)::int as n from keel.recovery_proposal`);
  const forged = await viewer.request.post(`/executions/${other}`, {
    headers: {
      'next-action': headers['next-action']!,
      'content-type': headers['content-type'] ?? 'text/plain;charset=UTF-8',
      accept: 'text/x-component',
      origin: baseURL!,
    },
    data: (request.postData() ?? '').replaceAll(String(executionId), String(other)),
  });
  expect(await forged.text()).toContain('FORBIDDEN');
  const after = await db.query(`select count(*)::int as n from keel.recovery_proposal`);
  expect(after.rows[0].n).toBe(before.rows[0].n);
  const pending = await db.query(`select status from keel.recovery_proposal where id = $1`, [pendingId]);
  expect(pending.rows[0].status).toBe('PENDING');
});

test('a change made by another client shows on an open page within 2 seconds', async ({ page }) => {
  await signIn(page, 'viewer');
  const { rows } = await db.query(
    `select id, version::int as version from oxide_batch.ob_job_execution where status = 'COMPLETED' order by id desc
     limit 1`,
  );
  const { id, version } = rows[0];
  await page.goto(`/executions/${id}`);
  await expect(page.getByTestId('live-status')).toHaveAttribute('data-mode', 'live');
  await expect(page.getByText(`version ${version}`, { exact: false }).first()).toBeVisible();
  await db.query(
    `update oxide_batch.ob_job_execution set version = version + 1, updated_at = clock_timestamp() where id = $1`,
    [id],
  );
  await expect(page.getByText(`version ${version + 1}`, { exact: false }).first()).toBeVisible({ timeout: 2_000 });
});
