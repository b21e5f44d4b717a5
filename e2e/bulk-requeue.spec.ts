import { expect, test } from '@playwright/test';
import type pg from 'pg';
import { e2eDatabase } from './support/database';
import { signIn } from './support/session';

/** Bulk requeue of ticked retry-scheduled settlements, through the bulk replay's frozen-preview job. */
test.use({ viewport: { width: 1440, height: 900 } });

let db: pg.Client;
test.beforeAll(async () => {
  db = await e2eDatabase();
});
test.afterAll(async () => {
  await db.end();
});

const attempt = async (receipt: string) =>
  (
    await db.query<{ v: number; attempts: number; next: string; due: boolean }>(
      `select row_version::int as v, attempts, next_visible_at_ms::text as next,
         next_visible_at_ms <= (extract(epoch from clock_timestamp()) * 1000)::bigint as due
       from settle.attempts where receipt_id = $1`,
      [receipt],
    )
  ).rows[0];

test('support ticks three retries, previews, one changes before the start, and each gets its own result', async ({
  page,
}) => {
  await signIn(page, 'support');
  await page.goto('/settlements?state=retry_scheduled');
  const table = page.getByRole('table', { name: 'Settlement queue' });
  const boxes = table.getByRole('checkbox', { name: /^Select / });
  await expect(boxes.first()).toBeVisible();
  const names = await boxes.evaluateAll((inputs) =>
    inputs.map((i) => i.getAttribute('aria-label')!.replace(/^Select /, '')),
  );
  // The first rows are the soonest due: the three, and every other retry with them, move an hour out together
  // (row versions kept), so none turns due mid-test and the due order the live list refreshes in stays as shown.
  const receipts = names.slice(0, 3);
  await db.query(
    `update settle.attempts set next_visible_at_ms = next_visible_at_ms + 3600000
     where receipt_id = any($1::text[])
        or (next_visible_at_ms > (extract(epoch from clock_timestamp()) * 1000)::bigint
            and (lease_owner is null or lease_until_ms <= (extract(epoch from clock_timestamp()) * 1000)::bigint))`,
    [receipts],
  );
  expect(receipts).toHaveLength(3);
  const before = await Promise.all(receipts.map(attempt));
  for (const receipt of receipts) await table.getByRole('checkbox', { name: `Select ${receipt}`, exact: true }).check();
  const selection = page.getByRole('group', { name: 'Selection' });
  await expect(selection.getByTestId('selection-count')).toHaveText('3 selected');

  await selection.getByRole('button', { name: 'Requeue selected…' }).click();
  const dialog = page.getByRole('alertdialog', { name: 'Bulk requeue: preview' });
  await expect(dialog).toContainText('the 3 settlements selected');
  await dialog.getByLabel(/Note/).fill('ledger is back');
  await dialog.getByRole('button', { name: 'Preview' }).click();
  const start = page.getByRole('alertdialog', { name: /^Start bulk requeue \d+\?$/ });
  await expect(start.getByTestId('bulk-preview-count')).toContainText('Exactly 3 settlements were frozen');
  await expect(start.getByRole('table', { name: /^Sample of bulk requeue/ })).toContainText(receipts[0]!);

  // A worker retries the second one after the preview: its row moves on, so the job must leave it alone.
  await db.query(`update settle.attempts set row_version = row_version + 1 where receipt_id = $1`, [receipts[1]]);
  await start.getByRole('button', { name: 'Requeue 3 settlements' }).click();
  await expect(page).toHaveURL(/\/settlements\/bulk\/\d+$/);
  await expect(page.getByTestId('bulk-status')).toHaveText('COMPLETED', { timeout: 20_000 });
  const counts = page.getByTestId('bulk-counts');
  await expect(counts.getByRole('button', { name: /^requeued/ })).toContainText('2');
  await expect(counts.getByRole('button', { name: /^changed_since_preview/ })).toContainText('1');
  const items = page.getByRole('table', { name: /^Items of bulk replay/ });
  const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  await expect(
    items.getByRole('row', { name: new RegExp(`${escapeRegExp(receipts[1]!)}.*changed_since_preview`) }),
  ).toBeVisible();
  for (const receipt of [receipts[0]!, receipts[2]!])
    await expect(items.getByRole('row', { name: new RegExp(`${escapeRegExp(receipt)}.*requeued`) })).toBeVisible();

  for (const i of [0, 2]) {
    expect(await attempt(receipts[i]!)).toMatchObject({
      v: before[i]!.v + 1,
      attempts: before[i]!.attempts,
      due: true,
    });
  }
  // Left alone: only the test's own bump, its visibility as it was.
  expect(await attempt(receipts[1]!)).toEqual({ ...before[1]!, v: before[1]!.v + 1 });
  const audited = await db.query(
    `select target_id from keel.audit_event where action = 'settlement.requeue' and reason = 'ledger is back'
     order by target_id`,
  );
  expect(audited.rows.map((r) => r.target_id)).toEqual([receipts[0], receipts[2]].sort());
});

test('the page checkbox ticks every requeueable row on the page, and Clear selection drops them', async ({ page }) => {
  await signIn(page, 'support');
  await page.goto('/settlements?state=retry_scheduled');
  const boxes = page.getByRole('table', { name: 'Settlement queue' }).getByRole('checkbox', { name: /^Select / });
  await expect(boxes.first()).toBeVisible();
  const onPage = await boxes.count();
  const selection = page.getByRole('group', { name: 'Selection' });
  await selection.getByRole('checkbox', { name: `Select all ${onPage} on this page` }).check();
  await expect(selection.getByTestId('selection-count')).toHaveText(`${onPage} selected`);
  await expect(boxes.last()).toBeChecked();
  await selection.getByRole('button', { name: 'Clear selection' }).click();
  await expect(selection.getByTestId('selection-count')).toHaveText('0 selected');
  await expect(selection.getByRole('button', { name: 'Requeue selected…' })).toBeDisabled();
});
