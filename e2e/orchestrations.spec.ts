import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { checkpointRow } from '../lib/demo/seed-orchestrations';
import { GOVERNING_SPEC, sealCheckpoint, type DurableCheckpoint } from '../lib/domain/checkpoint';
import { expectNoSeriousViolations } from './support/axe';
import { specDatabase } from './support/database';
import { signedInPages } from './support/session';
import { captureScreenshot } from './support/screenshots';

test.describe.configure({ mode: 'serial' });

const db = specDatabase(test);
const pageAs = signedInPages(test);

/**
 * The demo orchestration waiting on a human approval, with three compensation steps (lib/demo/seed-orchestrations.ts).
 */
const SEEDED = 'orch-payout-approval-001';

const serverKey = () =>
  Buffer.from(
    readFileSync(join(resolve(process.env.KEEL_E2E_HOME ?? '.keel/e2e'), 'checkpoint.key'), 'utf8').trim(),
    'hex',
  );

/** A checkpoint of this spec's own: a lapsed lease, a wait 40 minutes out and two undo steps. */
function checkpointNamed(executionId: string): DurableCheckpoint {
  const authorizationDigest = randomBytes(32).toString('hex');
  const now = Date.now();
  return {
    governingSpec: GOVERNING_SPEC,
    executionId,
    snapshots: {
      proposalDigest: 'a1'.repeat(32),
      manifestDigest: 'b2'.repeat(32),
      registryDigest: 'c3'.repeat(32),
      policyDigest: 'd4'.repeat(32),
      authorizationDigest,
    },
    lease: { ownerId: 'e2e-orchestrator', fencingToken: 7, expiresAt: now - 3_600_000 },
    completedNodeIds: ['start', 'collect'],
    wait: {
      kind: 'event',
      ownerId: 'e2e-orchestrator',
      deadline: now + 40 * 60_000,
      cancellationId: `cancel-${executionId}`,
    },
    retry: { retryable: true, maxAttempts: 3, backoffUnits: 1, budgetUnits: 4, idempotencyKey: `idem-${executionId}` },
    compensation: [
      { capabilityId: 'e2e.refund', authorizationDigest, order: 1 },
      { capabilityId: 'e2e.notify', authorizationDigest, order: 2 },
    ],
    authenticationTag: '',
  };
}

/** Stores a checkpoint sealed with `key`; `edit` changes the row after sealing, as a forger would. */
async function store(
  checkpoint: DurableCheckpoint,
  key: Buffer,
  edit: (row: ReturnType<typeof checkpointRow>) => void = () => {},
): Promise<ReturnType<typeof checkpointRow>> {
  const sealed = sealCheckpoint(checkpoint, key);
  if (!sealed.ok) throw new Error(sealed.error.reason);
  const row = checkpointRow(sealed.value);
  edit(row);
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
  return row;
}

/** From the leases table on /recovery, through the orchestration's link. */
async function openFromLeases(page: Page, executionId: string): Promise<void> {
  await page.goto('/recovery');
  const leases = page.getByRole('table', { name: 'Orchestration leases' });
  await leases.getByRole('link', { name: executionId, exact: true }).click();
  await expect(page).toHaveURL(`/orchestrations/${encodeURIComponent(executionId)}`);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText(`Orchestration ${executionId}`);
}

const countdownText = (page: Page) => page.getByTestId('wait-countdown').locator('span').first().textContent();

test('the leases table opens an orchestration: countdown, compensations in order, five digests, tag verified', async ({
  browser,
}) => {
  const stored = (await db.query(`select checkpoint from keel.durable_checkpoint where execution_id = $1`, [SEEDED]))
    .rows[0]?.checkpoint;
  expect(stored, 'the demo seed has the orchestration').toBeTruthy();
  const viewer = await pageAs(browser, 'viewer');
  await openFromLeases(viewer, SEEDED);

  const verification = viewer.getByTestId('tag-verification');
  await expect(verification).toContainText('Verified');
  await expect(verification).toContainText('HMAC-SHA256');

  const wait = viewer.getByRole('region', { name: 'Wait', exact: true });
  await expect(wait).toContainText('human approval');
  await expect(wait).toContainText(stored.wait.owner_id);
  await expect(wait).toContainText(stored.wait.cancellation_id);
  // Seeded 8 hours out: hours, minutes and seconds left, ticking against the server's clock.
  const first = await countdownText(viewer);
  expect(first).toMatch(/^\d+ h \d\d min \d\d s left$/);
  await expect.poll(() => countdownText(viewer)).not.toBe(first);

  await expect(viewer.getByRole('list', { name: 'Completed nodes' }).getByRole('listitem')).toHaveText(
    stored.completed_node_ids.map((node: string, i: number) => `${i + 1}. ${node}`),
  );

  const compensation = viewer.getByRole('table', { name: 'Compensation steps' });
  const rows = compensation.locator('tbody tr');
  await expect(rows).toHaveCount(3);
  await expect(rows.locator('td:nth-child(2)')).toHaveText([
    'payout.release-hold',
    'payout.reverse-transfer',
    'payout.notify-reversal',
  ]);
  await expect(rows.locator('td:nth-child(1)')).toHaveText(['1', '2', '3']);
  // A compensation runs in reverse order of `order`.
  await expect(rows.locator('td:nth-child(4)')).toHaveText(['3rd', '2nd', '1st']);
  await expect(rows.locator('td:nth-child(3)')).toHaveText(Array(3).fill(/^[0-9a-f]{12}… the authorization snapshot$/));

  const snapshots = viewer.getByRole('region', { name: 'Governing snapshots', exact: true }).locator('code');
  await expect(snapshots).toHaveText([
    stored.snapshots.proposal_digest,
    stored.snapshots.manifest_digest,
    stored.snapshots.registry_digest,
    stored.snapshots.policy_digest,
    stored.snapshots.authorization_digest,
  ]);

  const retry = viewer.getByRole('region', { name: 'Retry policy', exact: true });
  await expect(retry).toContainText(`at most ${stored.retry.max_attempts}`);
  await expect(retry).toContainText(`${stored.retry.budget_units} units`);
  await expect(retry).toContainText('not recorded in the checkpoint');
  await expectNoSeriousViolations(viewer);
  await captureScreenshot(viewer, 'orchestration-light', { fullPage: true });

  // The read API carries the verdict, never the tag (nor, of course, the key).
  const tag = (
    await db.query(`select authentication_tag from keel.durable_checkpoint where execution_id = $1`, [SEEDED])
  ).rows[0].authentication_tag as string;
  const api = await viewer.request.get(`/api/orchestrations/${encodeURIComponent(SEEDED)}`);
  expect(api.status()).toBe(200);
  const body = await api.text();
  expect(JSON.parse(body).verification).toEqual({ verified: true });
  expect(body).not.toContain(tag);
  expect(body).not.toContain(serverKey().toString('hex'));

  // On a phone the page never scrolls sideways; the compensation table scrolls inside its own box.
  await viewer.setViewportSize({ width: 390, height: 844 });
  await expect(compensation).toBeVisible();
  const widths = await viewer.evaluate(() => ({
    page: document.documentElement.scrollWidth,
    viewport: document.documentElement.clientWidth,
  }));
  expect(widths.page).toBeLessThanOrEqual(widths.viewport);
  await expectNoSeriousViolations(viewer);
  await captureScreenshot(viewer, 'orchestration-390-light', { fullPage: true });
});

test('a forged checkpoint says it does not verify and why; an edited row and an unreadable one too', async ({
  browser,
}) => {
  const suffix = randomBytes(4).toString('hex');
  // Characters a path must encode: the link and the API both carry the id exactly.
  const forged = await store(checkpointNamed(`orch e2e#forged-${suffix}`), randomBytes(32), (row) => {
    row.checkpoint.compensation[1]!.authorization_digest = 'ff'.repeat(32);
  });
  const edited = await store(checkpointNamed(`orch-e2e-edited-${suffix}`), serverKey(), (row) => {
    row.leaseExpiresAtMs += 60_000;
  });
  const unreadable = await store(checkpointNamed(`orch-e2e-unreadable-${suffix}`), serverKey(), (row) => {
    (row.checkpoint as unknown as Record<string, unknown>).rider = 'not covered by the tag';
  });

  const viewer = await pageAs(browser, 'viewer');
  await openFromLeases(viewer, forged.executionId);
  const verification = viewer.getByTestId('tag-verification');
  await expect(verification).toContainText('Not verified (TAG_MISMATCH)');
  await expect(verification).toContainText('another key sealed it');
  await expect(viewer.getByRole('region', { name: 'Lease', exact: true })).toContainText(
    'Not a candidate: the lease lapsed, but its tag does not verify',
  );
  // Shown as stored: the step bound to another digest makes the whole plan refused.
  await expect(viewer.getByRole('region', { name: 'Compensation', exact: true })).toContainText(
    'CompensationUnauthorized',
  );
  const runs = viewer.getByRole('table', { name: 'Compensation steps' }).locator('tbody tr td:nth-child(4)');
  await expect(runs).toHaveText(['never (plan refused)', 'never (plan refused)']);
  await expect(viewer.getByTestId('wait-countdown')).toContainText(/^\d+ min \d\d s left/);

  await openFromLeases(viewer, edited.executionId);
  await expect(viewer.getByTestId('tag-verification')).toContainText('Not verified (COLUMNS_DISAGREE)');

  await openFromLeases(viewer, unreadable.executionId);
  await expect(viewer.getByTestId('tag-verification')).toContainText('Not verified (INVALID_CHECKPOINT)');
  await expect(viewer.getByTestId('tag-verification')).toContainText('unknown fields: rider');
  await expect(viewer.getByRole('region', { name: 'Lease', exact: true })).toContainText('e2e-orchestrator');
  await expect(viewer.getByRole('region', { name: 'Wait', exact: true })).toHaveCount(0);
});

test('a proposal for an orchestration links to its page, which lists the pending proposal', async ({ browser }) => {
  const row = await store(checkpointNamed(`orch-e2e-proposed-${randomBytes(4).toString('hex')}`), serverKey());
  const operator = await pageAs(browser, 'operator');
  await operator.goto('/recovery');
  const lease = operator
    .getByRole('table', { name: 'Orchestration leases' })
    .getByRole('row')
    .filter({ hasText: row.executionId });
  await lease.getByRole('button', { name: 'Request takeover' }).click();
  const dialog = operator.getByRole('alertdialog');
  await dialog.getByLabel('Successor owner').fill('e2e-successor');
  await dialog.getByLabel('Reason for the request').fill('Its orchestrator host was retired.');
  await dialog.getByRole('button', { name: 'Create proposal' }).click();
  await expect(operator).toHaveURL(/\/recovery\/\d+$/);
  const proposalId = new URL(operator.url()).pathname.split('/').pop()!;

  await operator.getByRole('link', { name: `orchestration ${row.executionId}` }).click();
  await expect(operator).toHaveURL(`/orchestrations/${row.executionId}`);
  await expect(
    operator
      .getByRole('region', { name: 'Lease', exact: true })
      .getByRole('link', { name: `Proposal ${proposalId} pending` }),
  ).toBeVisible();
  const proposals = operator.getByRole('table', { name: 'Proposals for this orchestration' });
  await expect(proposals.locator('tbody tr')).toHaveCount(1);
  await expect(proposals).toContainText('PENDING');

  // Leave nothing pending for the specs that follow.
  await operator
    .getByRole('region', { name: 'Lease', exact: true })
    .getByRole('link', { name: `Proposal ${proposalId} pending` })
    .click();
  await operator.getByRole('button', { name: 'Cancel proposal' }).click();
  await operator.getByRole('alertdialog').getByRole('button', { name: 'Cancel proposal' }).click();
  await expect(operator.getByText('CANCELLED').first()).toBeVisible();
});

test('an id no checkpoint has is a 404 that names it, on the page and the API', async ({ browser }) => {
  const viewer = await pageAs(browser, 'viewer');
  const missing = `orch-e2e-missing-${randomBytes(4).toString('hex')}`;
  const response = await viewer.goto(`/orchestrations/${missing}`);
  expect(response?.status()).toBe(404);
  await expect(viewer.getByRole('heading', { level: 1 })).toHaveText(`No orchestration ${missing}`);
  await expect(viewer.getByRole('link', { name: 'Orchestration leases' })).toHaveAttribute(
    'href',
    '/recovery#orchestrations',
  );
  const api = await viewer.request.get(`/api/orchestrations/${missing}`);
  expect(api.status()).toBe(404);
  expect((await api.json()).code).toBe('NOT_FOUND');
});
