import { expect, test, type Locator, type Page } from '@playwright/test';
import { expectNoSeriousViolations, useTheme } from './support/axe';
import { specDatabase } from './support/database';
import { E2E_DEEP_LINKS } from './support/deep-links';
import { signIn } from './support/session';
import { captureScreenshot } from './support/screenshots';

test.use({ viewport: { width: 1440, height: 900 } });
test.describe.configure({ mode: 'serial' });

const db = specDatabase(test);

const fill = (template: string, id: string) => template.replaceAll('{id}', encodeURIComponent(id));

/** The element lies inside its table's scroll box (the table's parent) and the viewport, the box unscrolled. */
async function expectShownWithin(page: Page, element: Locator, box: Locator) {
  await box.evaluate((b) => (b.scrollLeft = 0));
  const el = (await element.boundingBox())!;
  const outer = (await box.boundingBox())!;
  expect(el.x).toBeGreaterThanOrEqual(outer.x);
  expect(el.x + el.width).toBeLessThanOrEqual(Math.min(outer.x + outer.width, page.viewportSize()!.width) + 0.5);
}

/** The newest demo dead letter: its receipt, reason, attempts and the detail digest its JSON holds as bytes. */
async function newestDeadLetter() {
  const { rows } = await db.query(`select receipt_id, reason, attempts, canonical_json from settle.dead_letters
    where receipt_id like 'rcpt\\_%' order by recorded_at_ms desc, receipt_id desc limit 1`);
  const row = rows[0];
  const bytes = JSON.parse(row.canonical_json).reason.detail_sha256 as number[];
  return {
    receiptId: row.receipt_id as string,
    reason: row.reason as string,
    attempts: Number(row.attempts),
    detailHex: Buffer.from(bytes).toString('hex'),
  };
}

test("a dead letter's failure in words with its links", async ({ page }) => {
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
  await signIn(page, 'support');
  const dead = await newestDeadLetter();
  expect(dead.detailHex).toMatch(/^[0-9a-f]{64}$/);

  // The list: a Detail column, and every column shown at 1440 px without scrolling the table,
  // on a full first page (the widest codes and times), the reason's words under its code.
  await page.goto('/settlements/dead-letters');
  const table = page.getByRole('table', { name: 'Dead letters' });
  const box = table.locator('xpath=..');
  await expect(table.locator('tbody tr[data-receipt]')).toHaveCount(50);
  // The time column's heading names the reader's zone ("Recorded (UTC)").
  await expect(table.getByRole('columnheader')).toHaveText([
    'Receipt',
    'Reason',
    'Detail',
    'Attempts',
    /^Recorded/,
    'Actions',
  ]);
  for (const header of await table.getByRole('columnheader').all()) await expectShownWithin(page, header, box);
  const first = table.locator('tbody tr[data-receipt]').first();
  await expectShownWithin(page, first.getByRole('cell').nth(2), box);
  await expectShownWithin(page, first.getByRole('button', { name: /^Discard / }), box);

  await page.goto(`/settlements/dead-letters?q=${encodeURIComponent(dead.receiptId)}`);
  const row = table.locator(`tbody tr[data-receipt="${dead.receiptId}"]`);
  const detail = row.getByRole('cell').nth(2);
  await expect(detail).toHaveText(`${dead.detailHex.slice(0, 12)}…`);
  await expect(detail).toHaveAttribute('title', new RegExp(`; detail SHA-256 ${dead.detailHex}\\.$`));
  await expect(row.getByRole('cell').nth(1)).toHaveText(new RegExp(`^${dead.reason}[a-z]`));
  await expect(row).not.toContainText('[');

  // The receipt: a sentence from the reason code, attempts and time; each field by name; the digest as hex.
  await row.getByRole('link', { name: dead.receiptId }).click();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText(`Receipt ${dead.receiptId}`);
  const plural = dead.attempts === 1 ? 'attempt' : 'attempts';
  await expect(page.getByTestId('failure-sentence')).toHaveText(
    new RegExp(`^Dead-lettered after ${dead.attempts} ${plural}: .+ \\(${dead.reason}\\)\\. Recorded .+\\.$`),
  );
  const failure = page.getByRole('region', { name: 'Failure' });
  await expect(failure.getByRole('term')).toHaveText([
    'Reason code',
    'Attempts',
    'Recorded',
    'Settlement finalized',
    'Record schema',
    'Detail SHA-256',
  ]);
  await expect(failure.getByRole('definition').nth(4)).toHaveText('chio.settle.dead-letter.v2');
  await expect(page.getByTestId('detail-sha256')).toHaveText(dead.detailHex);
  await expect(page.locator('main')).not.toContainText('"detail_sha256":[');
  await failure.getByRole('button', { name: 'Copy detail SHA-256' }).click();
  await expect(failure.getByRole('button', { name: 'Copy detail SHA-256' })).toHaveText('Copied');
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(dead.detailHex);

  // Its links: its list, its audit trail, and the team's logs (set for receipts); no traces (not set).
  const related = page.getByRole('navigation', { name: `Related to receipt ${dead.receiptId}` });
  await expect(related.getByRole('link', { name: 'In the dead letters' })).toHaveAttribute(
    'href',
    `/settlements/dead-letters?q=${encodeURIComponent(dead.receiptId)}`,
  );
  const logs = related.getByRole('link', { name: 'Logs (opens in a new tab)' });
  await expect(logs).toHaveAttribute('href', fill(E2E_DEEP_LINKS.KEEL_LOG_URL_TEMPLATE_RECEIPT, dead.receiptId));
  await expect(logs).toHaveAttribute('target', '_blank');
  await expect(logs).toHaveAttribute('rel', 'noopener noreferrer');
  await expect(related.getByRole('link', { name: /^Traces/ })).toHaveCount(0);

  for (const theme of ['light', 'dark'] as const) {
    await useTheme(page, theme);
    await expect(page.getByTestId('detail-sha256')).toHaveText(dead.detailHex);
    await expectNoSeriousViolations(page);
    await captureScreenshot(page, `receipt-failure-${theme}`, { fullPage: true });
  }
  await useTheme(page, 'light');

  await related.getByRole('link', { name: 'Audit events for this receipt' }).click();
  await expect(page).toHaveURL(/\/audit\?/);
  const url = new URL(page.url());
  expect([url.searchParams.get('targetKind'), url.searchParams.get('targetId')]).toEqual([
    'settlement',
    dead.receiptId,
  ]);
  await expect(page.getByRole('heading', { level: 1, name: 'Audit' })).toBeVisible();
});

test('an execution links its retry keys, proposals, audit, logs and traces; a key links back to its step', async ({
  page,
}) => {
  await signIn(page, 'viewer');
  const { rows } = await db.query(`select s.job_execution_id as execution_id from oxide_batch.ob_step_execution s
    where jsonb_typeof(s.fault_state_payload -> 'entries') = 'array'
      and jsonb_array_length(s.fault_state_payload -> 'entries') > 0
    order by s.job_execution_id desc limit 1`);
  const executionId = Number(rows[0].execution_id);
  await page.goto(`/executions/${executionId}`);
  const related = page.getByRole('navigation', { name: `Related to execution ${executionId}` });
  await expect(related.getByRole('link')).toHaveText([
    'Retry keys of this execution',
    'Recovery history and proposals',
    'Audit events for this execution',
    /^Logs/,
    /^Traces/,
  ]);
  await expect(related.getByRole('link', { name: 'Traces (opens in a new tab)', exact: true })).toBeVisible();
  await expect(related.getByRole('link', { name: 'Audit events for this execution' })).toHaveAttribute(
    'href',
    `/audit?targetKind=batch_execution&targetId=${executionId}`,
  );
  await expect(related.getByRole('link', { name: /^Logs/ })).toHaveAttribute(
    'href',
    fill(E2E_DEEP_LINKS.KEEL_LOG_URL_TEMPLATE_EXECUTION, String(executionId)),
  );
  await expect(related.getByRole('link', { name: /^Traces/ })).toHaveAttribute(
    'href',
    fill(E2E_DEEP_LINKS.KEEL_TRACE_URL_TEMPLATE_EXECUTION, String(executionId)),
  );

  await related.getByRole('link', { name: 'Retry keys of this execution' }).click();
  await expect(page).toHaveURL(new RegExp(`/retry-keys\\?execution=${executionId}$`));
  await expect(page.getByTestId('retry-keys-execution')).toContainText(`Only the steps of execution ${executionId}.`);
  const keys = page.getByRole('table', { name: 'Unresolved retry keys' });
  await expect(keys.locator('tbody tr').first()).toBeVisible();
  const executionCells = keys.locator('tbody tr td:nth-child(7)');
  expect(new Set(await executionCells.allTextContents())).toEqual(new Set([String(executionId)]));
  for (const theme of ['light', 'dark'] as const) {
    await useTheme(page, theme);
    await expect(keys.locator('tbody tr').first()).toBeVisible();
    await expectNoSeriousViolations(page);
    await captureScreenshot(page, `retry-keys-execution-${theme}`);
  }
  await useTheme(page, 'light');

  // A key's step opens the execution at that step's row.
  const step = keys.locator('tbody tr').first().getByRole('cell').nth(5).getByRole('link');
  const stepId = (await keys.locator('tbody tr').first().getByRole('cell').nth(5).textContent())!.match(/#(\d+)/)![1];
  await step.click();
  await expect(page).toHaveURL(new RegExp(`/executions/${executionId}#step-${stepId}$`));
  await expect(page.locator(`tr#step-${stepId}`)).toBeInViewport();
  await page.getByRole('link', { name: 'Retry keys of this execution' }).click();
  await page.getByRole('link', { name: `Back to execution ${executionId}` }).click();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText(`Execution ${executionId}`);
});
