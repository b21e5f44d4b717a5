import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect, test, type Locator, type Page } from '@playwright/test';
import { checkpointRow } from '../lib/demo/seed-orchestrations';
import { sealCheckpoint } from '../lib/domain/checkpoint';
import { GOVERNING_SPEC, type DurableCheckpoint } from '../lib/domain/checkpoint-model';
import { expectNoSeriousViolations } from './support/axe';
import { specDatabase } from './support/database';
import { signedInPages, toast } from './support/session';

/** What an on-call engineer met in the console, each checked the way they met it, at 1440 x 900. */
const VIEWPORT = { width: 1440, height: 900 };
test.use({ viewport: VIEWPORT });
test.describe.configure({ mode: 'serial' });

const db = specDatabase(test);
const pageAs = signedInPages(test);

/** The element lies inside the viewport and inside its scroll box, with the box scrolled to its start. */
async function expectShownWithin(page: Page, element: Locator, box: Locator) {
  await box.evaluate((b) => (b.scrollLeft = 0));
  const el = (await element.boundingBox())!;
  const outer = (await box.boundingBox())!;
  expect(el.x).toBeGreaterThanOrEqual(outer.x);
  expect(el.x + el.width).toBeLessThanOrEqual(Math.min(outer.x + outer.width, page.viewportSize()!.width) + 0.5);
}

async function expectNoSidewaysScroll(box: Locator) {
  const { scrollWidth, clientWidth } = await box.evaluate((b) => ({
    scrollWidth: b.scrollWidth,
    clientWidth: b.clientWidth,
  }));
  expect(scrollWidth).toBeLessThanOrEqual(clientWidth);
}

test('a replayed dead letter links to its receipt; a carried reason filter hiding it says so, one click off', async ({
  browser,
}) => {
  const { rows } = await db.query<{ receipt_id: string }>(
    `select receipt_id from settle.dead_letters where reason = 'rpc' order by receipt_id limit 1`,
  );
  const receipt = rows[0]!.receipt_id;
  const support = await pageAs(browser, 'support');
  await support.goto('/settlements/dead-letters');
  await support.getByTestId('dead-letter-groups').locator('[data-reason="rpc"]').click();
  await expect(support).toHaveURL(/reason=rpc/);
  await support.getByLabel('Receipt id starts with').fill(receipt);
  await support.getByRole('button', { name: 'Apply filters' }).click();
  await support.getByRole('button', { name: `Replay ${receipt}` }).click();
  await support.getByRole('alertdialog').getByLabel(/Note/).fill('rpc endpoint back');
  await support.getByRole('alertdialog').getByRole('button', { name: 'Replay dead letter' }).click();
  await expect(toast(support)).toContainText(`Replayed ${receipt}`);

  // The toast leads to where the receipt went.
  await toast(support)
    .getByRole('link', { name: `Open ${receipt}` })
    .click();
  await expect(support.getByRole('heading', { level: 1 })).toHaveText(`Receipt ${receipt}`);
  await expect(support.getByTestId('receipt-place')).toContainText('queued, due');

  // Back on the dead letters, the Due tab keeps reason=rpc, which the replayed receipt no longer has.
  await support.goBack();
  await expect(support).toHaveURL(/\/settlements\/dead-letters\?/);
  await support.getByRole('navigation', { name: 'Settlement views' }).getByRole('link', { name: /^Due/ }).click();
  await expect(support).toHaveURL(/state=due/);
  await expect(support).toHaveURL(/reason=rpc/);
  const table = support.getByRole('table', { name: 'Settlement queue' });
  await expect(table).toContainText(`Receipt ${receipt} is queued (due), hidden by the filter reason rpc.`);
  await table.getByRole('link', { name: 'Clear reason rpc' }).click();
  await expect(support).not.toHaveURL(/reason=/);
  await expect(table.getByRole('row').filter({ hasText: receipt })).toContainText('due');
});

test('a refusal toast is an alert of its own, announced at once rather than after the polite queue', async ({
  browser,
}) => {
  const { rows } = await db.query<{ receipt_id: string }>(
    `select receipt_id from settle.dead_letters where reason = 'backend' order by receipt_id limit 1`,
  );
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
  expect(
    await alert.evaluate((el) => el.closest('[aria-live], [role="alert"], [role="status"], [role="log"]') === el),
  ).toBe(true);
});

test('a wrong id opens a not-found page in the console naming what is missing, with a link back to its list', async ({
  browser,
}) => {
  const viewer = await pageAs(browser, 'viewer');
  const cases = [
    { url: '/executions/999999999', heading: 'No such execution', link: 'All executions', href: '/executions' },
    {
      url: '/recovery/999999999',
      heading: 'No such recovery proposal',
      link: 'All recovery proposals',
      href: '/recovery',
    },
    { url: '/recovery/xyz', heading: 'No such recovery proposal', link: 'All recovery proposals', href: '/recovery' },
    { url: '/settlements/nope', heading: 'No such receipt', link: 'Dead letters', href: '/settlements/dead-letters' },
    {
      url: '/settlements/bulk/999999999',
      heading: 'No such bulk replay',
      link: 'All bulk replays',
      href: '/settlements/bulk',
    },
  ];
  for (const entry of cases) {
    const response = await viewer.goto(entry.url);
    expect(response?.status(), entry.url).toBe(404);
    await expect(viewer.getByTestId('signed-in-user'), entry.url).toContainText('viewer');
    await expect(
      viewer.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Executions' }),
    ).toBeVisible();
    await expect(viewer.getByRole('heading', { level: 1 }), entry.url).toHaveText(entry.heading);
    await expect(viewer.getByRole('main').getByRole('link', { name: entry.link })).toHaveAttribute('href', entry.href);
  }
  await expectNoSeriousViolations(viewer);
  await viewer.getByRole('main').getByRole('link', { name: 'All bulk replays' }).click();
  await expect(viewer.getByRole('heading', { level: 1 })).toHaveText('Bulk replays');

  // An address no page has says so too, with a way back into the console.
  const response = await viewer.goto('/recovery/proposals/xyz');
  expect(response?.status()).toBe(404);
  await expect(viewer.getByRole('heading', { level: 1 })).toHaveText('No such page');
  await expect(viewer.getByRole('link', { name: 'Overview' })).toHaveAttribute('href', '/');
});

test('a filter that does not parse is explained in words, one sentence per field, with a way back', async ({
  browser,
}) => {
  const viewer = await pageAs(browser, 'viewer');
  const problems = viewer.getByTestId('filter-problems');
  await viewer.goto('/executions?updatedFrom=yesterday');
  await expect(problems.getByRole('listitem')).toHaveText([
    'Updated from must be a date like 2026-12-03 or a UTC time like 2026-12-03T10:00:00Z.',
  ]);

  await viewer.goto('/settlements/dead-letters?minAttempts=lots&reason=nope&minAge=ages');
  await expect(problems.getByRole('listitem')).toHaveCount(3);
  await expect(problems).toContainText('Attempts at least must be a whole number of attempts, such as 3.');
  await expect(problems).toContainText('Unknown reason code nope.');
  await expect(problems).toContainText('Age at least: An age such as 45s, 30m, 6h or 2d.');
  await expect(problems).not.toContainText('Invalid');

  await viewer.goto('/recovery?status=DONE');
  await expect(problems.getByRole('listitem')).toHaveText([
    'Status must be one of PENDING, APPROVED, REJECTED, EXPIRED, SUPERSEDED, CANCELLED.',
  ]);
  await viewer.getByRole('link', { name: 'Clear the filters' }).click();
  await expect(viewer).toHaveURL(/\/recovery$/);
  await expect(viewer.getByRole('table', { name: 'Recovery proposals' })).toBeVisible();
});

/** A lapsed lease held under the long names the demo runtime's orchestrators use, sealed with the e2e server's key. */
async function longNamedLapsedLease(): Promise<string> {
  const key = Buffer.from(
    readFileSync(join(resolve(process.env.KEEL_E2E_HOME ?? '.keel/e2e'), 'checkpoint.key'), 'utf8').trim(),
    'hex',
  );
  const now = Date.now();
  const checkpoint: DurableCheckpoint = {
    governingSpec: GOVERNING_SPEC,
    executionId: `orch-merchant-onboarding-${randomBytes(4).toString('hex')}`,
    snapshots: {
      proposalDigest: '1'.repeat(64),
      manifestDigest: '2'.repeat(64),
      registryDigest: '3'.repeat(64),
      policyDigest: '4'.repeat(64),
      authorizationDigest: '5'.repeat(64),
    },
    lease: {
      ownerId: `demo-orchestrator-${randomBytes(3).toString('hex')}-2`,
      fencingToken: 1_234_567,
      expiresAt: now - 3 * 3_600_000,
    },
    completedNodeIds: ['start', 'validate'],
    wait: null,
    retry: { retryable: true, maxAttempts: 5, backoffUnits: 2, budgetUnits: 10, idempotencyKey: 'idem-e2e-long' },
    compensation: [],
    authenticationTag: '',
  };
  const sealed = sealCheckpoint(checkpoint, key);
  if (!sealed.ok) throw new Error(sealed.error.reason);
  const row = checkpointRow(sealed.value);
  await db.query(
    `insert into keel.durable_checkpoint (execution_id, checkpoint, authentication_tag, lease_owner, fencing_token,
     lease_expires_at_ms) values ($1, $2, $3, $4, $5, $6)`,
    [
      row.executionId,
      JSON.stringify(row.checkpoint),
      row.authenticationTag,
      row.leaseOwner,
      row.fencingToken,
      row.leaseExpiresAtMs,
    ],
  );
  return row.executionId;
}

test('at 1440 px Request takeover stays in the leases table with long names; bulk samples show each column', async ({
  browser,
}) => {
  const orchestration = await longNamedLapsedLease();
  const operator = await pageAs(browser, 'operator');
  await operator.goto('/recovery');
  const leases = operator.getByRole('table', { name: 'Orchestration leases' });
  const region = leases.locator('xpath=..');
  const row = leases.getByRole('row').filter({ hasText: orchestration });
  const takeover = row.getByRole('button', { name: 'Request takeover' });
  await expect(takeover).toBeVisible();
  await expectNoSidewaysScroll(region);
  await expectShownWithin(operator, takeover, region);

  const support = await pageAs(browser, 'support');
  await support.goto('/settlements/dead-letters?reason=malformed_financial_metadata');
  await support.getByRole('button', { name: 'Bulk replay these…' }).click();
  const dialog = support.getByRole('alertdialog');
  await dialog.getByLabel(/Note/).fill('signer fixed');
  await dialog.getByRole('button', { name: 'Preview' }).click();
  const sample = dialog.getByRole('table', { name: /^Sample of bulk replay/ });
  await expect(sample.locator('tbody tr').first()).toBeVisible();
  const box = sample.locator('xpath=..');
  await expectNoSidewaysScroll(box);
  await expectShownWithin(support, sample.getByRole('columnheader', { name: 'Recorded' }), box);
  await expectShownWithin(support, sample.locator('tbody tr').first().locator('td').last(), box);
  await dialog.getByRole('button', { name: 'Cancel' }).click();
});

/** Stale STARTED executions nobody has proposed yet, by the server's clock. */
async function staleExecution(): Promise<number> {
  const { rows } = await db.query<{ id: string }>(
    `select e.id from oxide_batch.ob_job_execution e
     where e.status = 'STARTED' and e.updated_at < clock_timestamp() - interval '30 minutes'
       and not exists (select 1 from keel.recovery_proposal p where p.target_kind = 'batch'
       and p.target_id = e.id::text)
     order by e.id desc limit 1`,
  );
  return Number(rows[0]!.id);
}

test('the bulk dialog reads as sentences, and a refusal shown beside its field is not repeated in a toast', async ({
  browser,
}) => {
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
  await expect(dialog.getByRole('alert')).toHaveText(
    'Say why the takeover is needed: the approver reads it before deciding.',
  );
  await dialog.getByLabel('Reason for the request').fill('The worker host stopped answering.');
  await dialog.getByRole('button', { name: 'Create proposal' }).click();
  await expect(operator).toHaveURL(/\/recovery\/\d+$/);
  // Toasts stay on the page across the navigation, and a refusal's until dismissed: only the success is there.
  await expect(toast(operator)).toContainText(/Proposal \d+ created/);
  await expect(operator.getByTestId('toast')).toHaveCount(1);
});

test('an abandon request carries a required reason, kept on the proposal and shown to the approver', async ({
  browser,
}) => {
  const { rows } = await db.query<{ id: string }>(
    `select e.id from oxide_batch.ob_job_execution e
     where e.status = 'FAILED'
       and not exists (select 1 from keel.recovery_proposal p where p.target_kind = 'batch'
       and p.target_id = e.id::text)
       and not exists (select 1 from oxide_batch.ob_recovery_decision d where d.job_execution_id = e.id)
     order by e.id desc limit 1`,
  );
  const executionId = Number(rows[0]!.id);
  const approver = await pageAs(browser, 'approver');
  await approver.goto(`/executions/${executionId}`);
  await approver.getByRole('button', { name: 'Propose abandon' }).click();
  const dialog = approver.getByRole('alertdialog');
  await dialog.getByRole('button', { name: 'Create abandon proposal' }).click();
  await expect(dialog.getByRole('alert')).toHaveText(
    'Say why the execution should be abandoned: the approver reads it before deciding.',
  );
  await expect(dialog.getByLabel('Reason for the request')).toHaveAttribute('aria-invalid', 'true');
  const none = await db.query(
    `select count(*)::int as n from keel.recovery_proposal where target_kind = 'batch' and target_id = $1`,
    [String(executionId)],
  );
  expect(none.rows[0].n).toBe(0);

  const reason = 'The source file was withdrawn upstream; this run must never be resumed.';
  await dialog.getByLabel('Reason for the request').fill(reason);
  await dialog.getByRole('button', { name: 'Create abandon proposal' }).click();
  await expect(approver).toHaveURL(/\/recovery\/\d+$/);
  const proposalId = Number(new URL(approver.url()).pathname.split('/').pop());

  const approver2 = await pageAs(browser, 'approver2');
  await approver2.goto(`/recovery/${proposalId}`);
  const summary = approver2.getByRole('region', { name: 'Proposal' });
  await expect(summary).toContainText('Reason for the request');
  await expect(summary).toContainText(reason);
  await expect(summary).not.toContainText('no reason given');
  const stored = await db.query(`select kind, proposer_note as note from keel.recovery_proposal where id = $1`, [
    proposalId,
  ]);
  expect(stored.rows).toEqual([{ kind: 'ABANDON', note: reason }]);
  const audit = await db.query(
    `select reason from keel.audit_event where action = 'execution.abandon.propose' and operation_id = $1`,
    [`keel-proposal-${proposalId}`],
  );
  expect(audit.rows).toEqual([{ reason }]);
});

test('no role but admin gets a link to /users from the audit log', async ({ browser }) => {
  // A user event of the kind an admin's role change leaves (the matrix and the user tests make real ones).
  await db.query(
    `insert into keel.audit_event (actor_login, actor_role, action, target_kind, target_id, before, after, outcome,
     request_id)
     values ('admin', 'admin', 'user.role', 'user', 'viewer', '{"role":"viewer"}', '{"role":"viewer"}', 'APPLIED',
     'e2e-on-call-user-link')`,
  );
  for (const role of ['viewer', 'operator', 'approver', 'support'] as const) {
    const page = await pageAs(browser, role);
    await page.goto('/audit');
    await expect(page.getByRole('table', { name: 'Audit events' }).locator('tbody tr').first()).toBeVisible();
    await page.goto('/audit?targetKind=user');
    await expect(page.getByTestId('audit-count')).toHaveText(/match/);
    await expect(page.locator('a[href^="/users"]'), role).toHaveCount(0);
  }
  const admin = await pageAs(browser, 'admin');
  await admin.goto('/audit?targetKind=user&targetId=viewer');
  await expect(
    admin.getByRole('table', { name: 'Audit events' }).getByRole('link', { name: 'user viewer' }).first(),
  ).toHaveAttribute('href', '/users#user-viewer');
});

test('after a takeover the execution page says what happened and comes next, no destructive button up front', async ({
  browser,
}) => {
  const executionId = await staleExecution();
  const operator = await pageAs(browser, 'operator');
  await operator.goto(`/executions/${executionId}`);
  await operator.getByRole('button', { name: 'Request takeover' }).click();
  await operator.getByRole('alertdialog').getByLabel('Reason for the request').fill('Worker host batch-3 is gone.');
  await operator.getByRole('alertdialog').getByRole('button', { name: 'Create proposal' }).click();
  await expect(operator).toHaveURL(/\/recovery\/\d+$/);
  const proposalId = Number(new URL(operator.url()).pathname.split('/').pop());

  const approver = await pageAs(browser, 'approver');
  await approver.goto(`/recovery/${proposalId}`);
  await approver.getByRole('button', { name: 'Confirm takeover' }).click();
  const dialog = approver.getByRole('alertdialog');
  await expect(dialog).toBeVisible();
  const ack = dialog.getByRole('checkbox');
  if (await ack.isVisible()) await ack.check();
  await dialog.getByRole('button', { name: 'Confirm takeover' }).click();
  await expect(toast(approver)).toContainText('Takeover applied: execution is now FAILED');

  await approver.goto(`/executions/${executionId}`);
  const outcome = approver.getByRole('region', { name: 'Taken over: the execution is FAILED' });
  await expect(outcome).toContainText(`Proposal ${proposalId} (asked by operator) was confirmed by approver`);
  await expect(outcome).toContainText('The old worker is fenced out.');
  await expect(outcome).toContainText('New owner: none.');
  // The abandon is still there for an approver, folded away; nothing red is the next thing to press.
  await expect(approver.getByRole('button', { name: 'Propose abandon' })).toBeHidden();
  await expect(approver.getByTestId('not-candidate')).toHaveCount(0);
  await expectNoSeriousViolations(approver);
  await approver.getByText('More actions').click();
  await expect(approver.getByRole('button', { name: 'Propose abandon' })).toBeVisible();

  await operator.goto(`/executions/${executionId}`);
  await expect(operator.getByRole('region', { name: 'Taken over: the execution is FAILED' })).toBeVisible();
  await expect(operator.getByRole('button', { name: 'Request takeover' })).toHaveCount(0);
  await expect(operator.getByTestId('not-candidate')).toHaveCount(0);
});
