import { expect, test } from '@playwright/test';
import { specDatabase } from './support/database';
import { signIn } from './support/session';

/** Bulk actions on a selection of dead letters, through the same frozen-preview job as a filter. */
test.use({ viewport: { width: 1440, height: 900 } });

const db = specDatabase(test);

test('support ticks two dead letters and replays exactly those, with a result for each', async ({ page }) => {
  const pick = await db.query<{ reason: string }>(
    `select reason from settle.dead_letters where reason <> 'rpc' group by reason having count(*) >= 3
     order by count(*) desc, reason limit 1`,
  );
  const reason = pick.rows[0]!.reason;
  await signIn(page, 'support');
  await page.goto(`/settlements/dead-letters?reason=${reason}`);
  const table = page.getByRole('table', { name: 'Dead letters' });
  const receipts = await table
    .locator('tbody tr[data-receipt]')
    .evaluateAll((trs) => trs.slice(0, 2).map((tr) => tr.getAttribute('data-receipt')!));
  expect(receipts).toHaveLength(2);
  for (const receipt of receipts) await table.getByRole('checkbox', { name: `Select ${receipt}` }).check();
  const selection = page.getByRole('group', { name: 'Selection' });
  await expect(selection.getByTestId('selection-count')).toHaveText('2 selected');

  await selection.getByRole('button', { name: 'Replay selected…' }).click();
  const dialog = page.getByRole('alertdialog');
  await expect(dialog).toContainText('the 2 selected dead letters');
  await dialog.getByLabel(/Note/).fill('two picked by hand');
  await dialog.getByRole('button', { name: 'Preview' }).click();
  await expect(dialog.getByTestId('bulk-preview-count')).toContainText('Exactly 2 dead letters');
  await expect(dialog.getByRole('table', { name: /^Sample of bulk replay/ })).toContainText(receipts[0]!);
  await dialog.getByRole('button', { name: 'Replay 2 dead letters' }).click();
  await expect(page).toHaveURL(/\/settlements\/bulk\/\d+$/);
  await expect(page.getByTestId('bulk-status')).toHaveText('COMPLETED', { timeout: 20_000 });
  await expect(page.getByTestId('bulk-counts').locator('[data-result="replayed"]')).toContainText('2');
  const left = await db.query(`select count(*)::int as n from settle.dead_letters where receipt_id = any($1::text[])`, [
    receipts,
  ]);
  expect(left.rows[0].n).toBe(0);
  const audited = await db.query(
    `select count(*)::int as n from keel.audit_event where action = 'settlement.replay'
     and target_id = any($1::text[])`,
    [receipts],
  );
  expect(audited.rows[0].n).toBe(2);
});

test('selecting the whole page offers every dead letter, and that selection is the whole list', async ({ page }) => {
  await signIn(page, 'support');
  await page.goto('/settlements/dead-letters');
  const selection = page.getByRole('group', { name: 'Selection' });
  const rows = page.getByRole('table', { name: 'Dead letters' }).locator('tbody tr[data-receipt]');
  await expect(rows.first()).toBeVisible();
  const onPage = await rows.count();
  const total = Number((await db.query(`select count(*)::int as n from settle.dead_letters`)).rows[0].n);
  expect(total).toBeGreaterThan(onPage);
  await selection.getByRole('checkbox', { name: `Select all ${onPage} on this page` }).check();
  await expect(selection.getByTestId('selection-count')).toHaveText(`${onPage} selected`);
  await selection.getByRole('button', { name: `Select all ${total} dead letters` }).click();
  await expect(selection.getByTestId('selection-count')).toHaveText(`All ${total} dead letters are selected.`);
  await selection.getByRole('button', { name: 'Replay selected…' }).click();
  await expect(page.getByRole('alertdialog')).toContainText('every dead letter');
  await page.getByRole('alertdialog').getByRole('button', { name: 'Cancel' }).click();
  await selection.getByRole('button', { name: 'Clear selection' }).click();
  await expect(selection.getByTestId('selection-count')).toHaveText('0 selected');
});

test('support ticks one dead letter and discards it through a frozen preview; its JSON stays in the audit log', async ({
  page,
}) => {
  const pick = await db.query<{ receipt_id: string; reason: string }>(
    `select receipt_id, reason from settle.dead_letters where reason <> 'rpc' order by recorded_at_ms, receipt_id
     limit 1`,
  );
  const { receipt_id: receipt, reason } = pick.rows[0]!;
  await signIn(page, 'support');
  await page.goto(`/settlements/dead-letters?q=${encodeURIComponent(receipt)}`);
  await page
    .getByRole('table', { name: 'Dead letters' })
    .getByRole('checkbox', { name: `Select ${receipt}` })
    .check();
  await page.getByRole('group', { name: 'Selection' }).getByRole('button', { name: 'Discard selected…' }).click();
  const dialog = page.getByRole('alertdialog', { name: 'Bulk discard: preview' });
  await expect(dialog).toContainText('the 1 selected dead letter');
  await dialog.getByLabel(/Note/).fill('test receipt, never real');
  await dialog.getByRole('button', { name: 'Preview' }).click();
  const start = page.getByRole('alertdialog', { name: /^Start bulk discard \d+\?$/ });
  await expect(start.getByTestId('bulk-preview-count')).toContainText('Exactly 1 dead letters');
  await start.getByRole('button', { name: 'Discard 1 dead letters' }).click();
  await expect(page).toHaveURL(/\/settlements\/bulk\/\d+$/);
  await expect(page.getByTestId('bulk-status')).toHaveText('COMPLETED', { timeout: 20_000 });
  await expect(page.getByTestId('bulk-counts').locator('[data-result="discarded"]')).toContainText('1');
  const gone = await db.query(`select count(*)::int as n from settle.dead_letters where receipt_id = $1`, [receipt]);
  expect(gone.rows[0].n).toBe(0);
  const replays = await db.query(`select count(*)::int as n from keel.settlement_replay where receipt_id = $1`, [
    receipt,
  ]);
  expect(replays.rows[0].n).toBe(0);
  const audit = await db.query(
    `select before->>'reason' as reason, before ? 'canonicalJson' as kept from keel.audit_event
     where action = 'settlement.discard' and target_id = $1`,
    [receipt],
  );
  expect(audit.rows).toEqual([{ reason, kept: true }]);
});
