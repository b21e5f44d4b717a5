import { readFile } from 'node:fs/promises';
import { expect, test, type Browser, type Page, type Request } from '@playwright/test';
import { expectNoSeriousViolations, gotoInTheme } from './support/axe';
import { specDatabase } from './support/database';
import { signIn } from './support/session';
import { captureScreenshot } from './support/screenshots';

test.use({ viewport: { width: 1440, height: 900 } });
test.describe.configure({ mode: 'serial' });

const db = specDatabase(test);

/** What the journeys leave for the later tests: the captured replay, the receipts and the jobs. */
const state: {
  replay?: { url: string; id: string; contentType: string; body: string };
  receipt?: string;
  bulkReason?: string;
  bulkJob?: number;
} = {};

const toast = (page: Page) => page.getByTestId('toast').first();
const count = async (text: string, values: unknown[] = []) => Number((await db.query(text, values)).rows[0].n);
const replaysOf = (receiptId: string) =>
  count(`select count(*)::int as n from keel.settlement_replay where receipt_id = $1`, [receiptId]);

async function pageAs(browser: Browser, username: string): Promise<Page> {
  const page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();
  await signIn(page, username);
  return page;
}

async function captureAction(page: Page, act: () => Promise<void>) {
  const [request] = await Promise.all([
    page.waitForRequest((r: Request) => r.method() === 'POST' && Boolean(r.headers()['next-action'])),
    act(),
  ]);
  const headers = await request.allHeaders();
  return {
    url: request.url(),
    id: headers['next-action']!,
    contentType: headers['content-type'] ?? 'text/plain;charset=UTF-8',
    body: request.postData() ?? '',
  };
}

const postAction = (page: Page, action: NonNullable<typeof state.replay>, body: string, origin: string) =>
  page.request.post(action.url, {
    headers: { 'next-action': action.id, 'content-type': action.contentType, accept: 'text/x-component', origin },
    data: body,
  });

test('support replays one dead letter, once however often it is submitted, and its history shows the replay', async ({
  page,
  baseURL,
}) => {
  const { rows } = await db.query(
    `select receipt_id, reason, attempts from settle.dead_letters where reason = 'rpc'
     order by recorded_at_ms desc, receipt_id limit 1`,
  );
  const receipt = rows[0].receipt_id as string;
  state.receipt = receipt;
  await signIn(page, 'support');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settlements' }).click();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Settlements');
  await page.getByRole('navigation', { name: 'Settlement views' }).getByRole('link', { name: 'Dead letters' }).click();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Dead letters');
  await page.getByLabel('Receipt id starts with').fill(receipt);
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await expect(page).toHaveURL(new RegExp(`q=${receipt}`));
  await expect(page.getByTestId('dead-letter-count')).toHaveText('1 dead letter match');

  await page.getByRole('button', { name: `Replay ${receipt}` }).click();
  const dialog = page.getByRole('alertdialog');
  await expect(dialog).toContainText(`reason rpc, ${rows[0].attempts} attempts`);
  await expect(dialog).toContainText('queued again: pending observation, 0 attempts, due now');
  const confirm = dialog.getByRole('button', { name: 'Replay dead letter' });
  await expect(confirm).toBeDisabled(); // the note is required
  await dialog.getByLabel(/Note/).fill('ledger back after the outage');
  state.replay = await captureAction(page, () => confirm.click());
  await expect(toast(page)).toContainText(`Replayed ${receipt}: queued again with 0 attempts`);
  await expect(page.getByRole('table', { name: 'Dead letters' })).toContainText('No dead letters match these filters.');

  expect(await count(`select count(*)::int as n from settle.dead_letters where receipt_id = $1`, [receipt])).toBe(0);
  const queued = await db.query(`select work_kind, attempts from settle.attempts where receipt_id = $1`, [receipt]);
  expect(queued.rows).toEqual([{ work_kind: 'pending_observation', attempts: 0 }]);
  expect(await replaysOf(receipt)).toBe(1);

  // The same dialog submitted again, twice at once: the operation id makes it one replay.
  const again = await Promise.all([0, 1].map(() => postAction(page, state.replay!, state.replay!.body, baseURL!)));
  for (const response of again) expect(await response.text()).toContain(receipt);
  expect(await replaysOf(receipt)).toBe(1);

  await page.getByRole('navigation', { name: 'Settlement views' }).getByRole('link', { name: 'All queued' }).click();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Settlements');
  await page.getByLabel('Receipt id starts with').fill(receipt);
  await page.getByRole('button', { name: 'Apply filters' }).click();
  const row = page.getByRole('table', { name: 'Settlement queue' }).getByRole('row').filter({ hasText: receipt });
  await expect(row).toContainText('due');
  await row.getByRole('link', { name: receipt }).click();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText(`Receipt ${receipt}`);
  await expect(page.getByTestId('receipt-place')).toContainText('queued, due');
  const replays = page.getByRole('table', { name: 'Replays' });
  await expect(replays.getByRole('row')).toHaveCount(2);
  await expect(replays).toContainText('support');
  await expect(replays).toContainText('ledger back after the outage');
  const events = page.getByRole('table', { name: 'Settlement events' });
  await expect(events).toContainText('replayed');
  // Its dead-lettering carries the claim that led to it.
  await expect(events.getByRole('row').filter({ hasText: 'dead_lettered' })).toContainText(/held \d/);
  await expect(page.getByRole('table', { name: 'Audit events for this receipt' })).toContainText('settlement.replay');
});

test('a receipt id with a space, a slash and a percent sign has its own history page', async ({ page }) => {
  const odd = 'e2e odd/id%41';
  await db.query(
    `insert into settle.dead_letters (receipt_id, finalized_at, attempts, reason, canonical_json, recorded_at_ms)
     values ($1, 1, 2, 'unsupported', '{}', 1) on conflict (receipt_id) do nothing`,
    [odd],
  );
  await signIn(page, 'viewer');
  await page.goto(`/settlements/dead-letters?q=${encodeURIComponent('e2e odd')}`);
  await page.getByRole('link', { name: odd }).click();
  await expect(page.getByRole('heading', { level: 1 })).toHaveText(`Receipt ${odd}`);
  await expect(page.getByTestId('receipt-place')).toContainText('reason unsupported after 2 attempts');
  const api = await page.request.get(`/api/settlements/receipts/${encodeURIComponent(odd)}`);
  expect(await api.json()).toMatchObject({ receiptId: odd, deadLetter: { attempts: 2 } });
});

test('support bulk-replays one reason code: exactly the previewed items, each with its result', async ({
  page,
  browser,
}) => {
  const pick = await db.query(
    `select reason, count(*)::int as n from settle.dead_letters where reason <> 'rpc' group by reason
     having count(*) between 4 and 30 order by count(*), reason limit 1`,
  );
  const { reason, n } = pick.rows[0] as { reason: string; n: number };
  state.bulkReason = reason;
  await signIn(page, 'support');
  await page.goto('/settlements/dead-letters');
  await page.getByTestId('dead-letter-groups').locator(`[data-reason="${reason}"]`).click();
  await expect(page).toHaveURL(new RegExp(`reason=${reason}`));
  await expect(page.getByTestId('dead-letter-count')).toHaveText(`${n} dead letters match`);

  await page.getByRole('button', { name: 'Bulk replay these…' }).click();
  const dialog = page.getByRole('alertdialog');
  await expect(dialog).toContainText(`dead letters with reason ${reason}`);
  await dialog.getByLabel(/Note/).fill(`${reason} fixed upstream`);
  await dialog.getByRole('button', { name: 'Preview' }).click();
  await expect(dialog.getByTestId('bulk-preview-count')).toContainText(`Exactly ${n} dead letters were frozen`);
  await expect(dialog.getByRole('table').locator('tbody tr')).toHaveCount(Math.min(n, 20));
  const job = Number(
    (await db.query(`select max(id) as id from keel.bulk_replay where created_by_login = 'support'`)).rows[0].id,
  );
  state.bulkJob = job;

  // After the preview: a new dead letter that matches, one item recorded again, one discarded.
  const late = `e2e-late-${reason}`;
  await db.query(
    `insert into settle.dead_letters (receipt_id, finalized_at, attempts, reason, canonical_json, recorded_at_ms)
    values ($1, 1, 1, $2, '{}', (extract(epoch from clock_timestamp()) * 1000)::bigint)`,
    [late, reason],
  );
  const frozen = (
    await db.query(`select receipt_id from keel.bulk_replay_item where job = $1 order by receipt_id`, [job])
  ).rows.map((r) => r.receipt_id as string);
  expect(frozen).toHaveLength(n);
  await db.query(`update settle.dead_letters set recorded_at_ms = recorded_at_ms + 1 where receipt_id = $1`, [
    frozen[0],
  ]);
  const other = await pageAs(browser, 'support');
  await other.goto(`/settlements/${encodeURIComponent(frozen[1]!)}`);
  await other.getByRole('button', { name: 'Discard…' }).click();
  await expect(other.getByRole('alertdialog')).toContainText('is deleted for good');
  await other.getByRole('alertdialog').getByLabel(/Note/).fill('duplicate of another receipt');
  await other.getByRole('alertdialog').getByRole('button', { name: 'Discard dead letter' }).click();
  await expect(toast(other)).toContainText(`Discarded the dead letter of ${frozen[1]}`);
  // The receipt's page says which ending its history records, and who caused it.
  await expect(other.getByTestId('receipt-place')).toContainText('its dead letter was discarded by support');
  await other.context().close();

  await dialog.getByRole('button', { name: `Replay ${n} dead letters` }).click();
  await expect(page).toHaveURL(new RegExp(`/settlements/bulk/${job}$`));
  await expect(page.getByTestId('bulk-status')).toHaveText('COMPLETED', { timeout: 20_000 });
  await expect(page.getByTestId('bulk-progress')).toHaveText(`${n} of ${n} items processed`);
  const counts = page.getByTestId('bulk-counts');
  await expect(counts.locator('[data-result="replayed"]')).toContainText(String(n - 2));
  await expect(counts.locator('[data-result="changed_since_preview"]')).toContainText('1');
  await expect(counts.locator('[data-result="no_longer_dead_lettered"]')).toContainText('1');
  await counts.locator('[data-result="changed_since_preview"]').click();
  const items = page.getByRole('table', { name: `Items of bulk replay ${job}` });
  await expect(items.locator('tbody tr')).toHaveCount(1);
  await expect(items).toContainText(frozen[0]!);

  expect(await count(`select count(*)::int as n from keel.settlement_replay where bulk_job = $1`, [job])).toBe(n - 2);
  // The late arrival was never part of the job: still dead-lettered, never replayed.
  expect(await count(`select count(*)::int as n from settle.dead_letters where receipt_id = $1`, [late])).toBe(1);
  expect(await replaysOf(late)).toBe(0);
  expect(await count(`select count(*)::int as n from keel.bulk_replay_item where receipt_id = $1`, [late])).toBe(0);
  expect(await count(`select count(*)::int as n from settle.dead_letters where receipt_id = $1`, [frozen[0]])).toBe(1);

  // The results stay viewable from the list of past jobs.
  await page.goto('/settlements/bulk');
  const listed = page
    .getByRole('table', { name: 'Bulk replays' })
    .getByRole('row')
    .filter({ has: page.getByRole('link', { name: String(job), exact: true }) });
  await expect(listed).toContainText('COMPLETED');
  await expect(listed).toContainText(`${n} / ${n}`);
});

test('support cancels a previewed bulk replay and requeues a retry now', async ({ page }) => {
  const pick = await db.query(
    `select reason, count(*)::int as n from settle.dead_letters where reason not in ('rpc', $1) group by reason
     order by count(*), reason limit 1`,
    [state.bulkReason],
  );
  const { reason, n } = pick.rows[0] as { reason: string; n: number };
  await signIn(page, 'support');
  await page.goto(`/settlements/dead-letters?reason=${reason}`);
  await page.getByRole('button', { name: 'Bulk replay these…' }).click();
  await page.getByRole('alertdialog').getByLabel(/Note/).fill('not yet');
  await page.getByRole('alertdialog').getByRole('button', { name: 'Preview' }).click();
  await expect(page.getByRole('alertdialog').getByTestId('bulk-preview-count')).toContainText(
    `Exactly ${n} dead letters`,
  );
  await page.getByRole('alertdialog').getByRole('button', { name: 'Cancel' }).click();
  const job = Number((await db.query(`select max(id) as id from keel.bulk_replay`)).rows[0].id);
  await page.goto(`/settlements/bulk/${job}`);
  await expect(page.getByTestId('bulk-status')).toHaveText('PREVIEWED');
  await page.getByRole('button', { name: 'Cancel bulk replay…' }).click();
  await expect(page.getByRole('alertdialog')).toContainText(`The ${n} items not yet processed end as cancelled`);
  await page.getByRole('alertdialog').getByRole('button', { name: 'Cancel bulk replay' }).click();
  await expect(page.getByTestId('bulk-status')).toHaveText('CANCELLED');
  await expect(page.getByTestId('bulk-counts').locator('[data-result="cancelled"]')).toContainText(String(n));
  expect(await count(`select count(*)::int as n from settle.dead_letters where reason = $1`, [reason])).toBe(n);
  // A preview cancelled before it started is no job: gone from the list, still under the CANCELLED filter.
  await page.goto('/settlements/bulk');
  await expect(
    page.getByRole('table', { name: 'Bulk replays' }).getByRole('link', { name: String(job), exact: true }),
  ).toHaveCount(0);
  await page.goto('/settlements/bulk?status=CANCELLED');
  await expect(
    page.getByRole('table', { name: 'Bulk replays' }).getByRole('link', { name: String(job), exact: true }),
  ).toHaveCount(1);

  await page.goto('/settlements?state=retry_scheduled');
  const first = page.getByRole('table', { name: 'Settlement queue' }).locator('tbody tr').first();
  const receipt = (await first.getByRole('link').textContent())!;
  const before = (await db.query(`select row_version::int as v from settle.attempts where receipt_id = $1`, [receipt]))
    .rows[0].v;
  await first.getByRole('button', { name: `Requeue ${receipt} now` }).click();
  await expect(page.getByRole('alertdialog')).toContainText(`still at row version ${before}`);
  await page.getByRole('alertdialog').getByRole('button', { name: 'Requeue now' }).click();
  await expect(toast(page)).toContainText(`Requeued ${receipt}: due now`);
  const after = await db.query(
    `select row_version::int as v, next_visible_at_ms <= (extract(epoch from clock_timestamp()) * 1000)::bigint as due
     from settle.attempts where receipt_id = $1`,
    [receipt],
  );
  expect(after.rows[0]).toEqual({ v: before + 1, due: true });
});

test('a viewer sees no settlement actions, and a forged replay from the viewer is refused and changes nothing', async ({
  page,
  baseURL,
}) => {
  expect(state.replay && state.bulkJob).toBeTruthy();
  await signIn(page, 'viewer');
  await page.goto('/settlements/dead-letters');
  await expect(page.getByRole('table', { name: 'Dead letters' }).locator('tbody tr')).toHaveCount(50);
  await expect(page.getByRole('button', { name: /^(Replay|Discard)/ })).toHaveCount(0);
  await expect(page.getByRole('button', { name: /Bulk replay/ })).toHaveCount(0);
  await page.goto('/settlements?state=retry_scheduled');
  await expect(page.getByRole('table', { name: 'Settlement queue' }).locator('tbody tr').first()).toBeVisible();
  await expect(page.getByRole('button', { name: /Requeue/ })).toHaveCount(0);
  await page.goto(`/settlements/bulk/${state.bulkJob}`);
  await expect(page.getByTestId('bulk-status')).toBeVisible();
  await expect(page.getByRole('button', { name: /Cancel bulk replay|Start replay/ })).toHaveCount(0);

  const target = (
    await db.query(`select receipt_id from settle.dead_letters where reason = 'rpc' order by receipt_id limit 1`)
  ).rows[0].receipt_id as string;
  await page.goto(`/settlements/${encodeURIComponent(target)}`);
  await expect(page.getByTestId('receipt-place')).toContainText('dead-lettered');
  await expect(page.getByRole('button', { name: /Replay|Discard/ })).toHaveCount(0);

  const replaysBefore = await count(`select count(*)::int as n from keel.settlement_replay`);
  // Other specs (the access matrix) may have had the viewer refused before: count this refusal alone.
  const refusalsOf = () =>
    db.query(
      `select actor_login, outcome, code from keel.audit_event where action = 'settlement.replay'
       and actor_login = 'viewer' order by id`,
    );
  const refusedBefore = (await refusalsOf()).rows.length;
  const forgedBody = state
    .replay!.body.replaceAll(state.receipt!, target)
    .replace(/"operationId":"[^"]+"/, '"operationId":"forged-by-viewer"');
  const forged = await postAction(page, state.replay!, forgedBody, baseURL!);
  expect(await forged.text()).toContain('FORBIDDEN');
  expect(await count(`select count(*)::int as n from keel.settlement_replay`)).toBe(replaysBefore);
  expect(await count(`select count(*)::int as n from settle.dead_letters where receipt_id = $1`, [target])).toBe(1);
  const refused = await refusalsOf();
  expect(refused.rows.slice(refusedBefore)).toEqual([{ actor_login: 'viewer', outcome: 'REFUSED', code: 'FORBIDDEN' }]);
});

test('the audit page lists each settlement action with actor and outcome; the CSV export has the same rows', async ({
  page,
}) => {
  await signIn(page, 'admin');
  const expected: Record<string, [string, string][]> = {
    'settlement.replay': [
      ['viewer', 'REFUSEDFORBIDDEN'],
      ['support', 'APPLIED'],
    ],
    'settlement.discard': [['support', 'APPLIED']],
    'settlement.requeue': [['support', 'APPLIED']],
    'settlement.bulk_replay.preview': [['support', 'APPLIED']],
    'settlement.bulk_replay.start': [['support', 'APPLIED']],
    'settlement.bulk_replay.cancel': [['support', 'APPLIED']],
  };
  for (const [action, pairs] of Object.entries(expected)) {
    await page.goto(`/audit?action=${action}`);
    await expect(page.getByLabel('Action', { exact: true })).toHaveValue(action);
    const rows = page.getByRole('table', { name: 'Audit events' }).locator('tbody tr[data-audit-id]');
    const total = await count(`select count(*)::int as n from keel.audit_event where action = $1`, [action]);
    // One page holds 50; a bulk requeue earlier in the run can write more requeues than that.
    await expect(rows).toHaveCount(Math.min(total, 50));
    const shown = await rows.evaluateAll((trs) =>
      trs.map((tr) => Array.from(tr.querySelectorAll('td'), (td) => td.textContent?.trim() ?? '')),
    );
    for (const [actor, outcome] of pairs)
      expect(shown.some((c) => c[1] === actor && c[3] === action && c[7] === outcome)).toBe(true);

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Export CSV (filtered)' }).click(),
    ]);
    const lines = (await readFile((await download.path())!, 'utf8')).trimEnd().split('\r\n').slice(1);
    const ids = await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-audit-id')));
    expect(lines).toHaveLength(total);
    expect(lines.map((l) => l.split(',')[0]).slice(0, ids.length)).toEqual(ids);
    expect(lines.every((l) => l.split(',')[4] === action)).toBe(true);
  }
});

for (const theme of ['light', 'dark'] as const) {
  test(`the settlement pages have no serious accessibility violations in ${theme} mode`, async ({ page }) => {
    await signIn(page, 'support');
    const pages: [string, string, () => Promise<void>][] = [
      [
        'settlements',
        '/settlements',
        () => expect(page.getByRole('table', { name: 'Settlement queue' }).locator('tbody tr')).toHaveCount(50),
      ],
      ['dead-letters', '/settlements/dead-letters', () => expect(page.getByTestId('dead-letter-groups')).toBeVisible()],
      [
        'receipt-history',
        `/settlements/${encodeURIComponent(state.receipt!)}`,
        () => expect(page.getByRole('table', { name: 'Replays' })).toBeVisible(),
      ],
      [
        'bulk-replay',
        `/settlements/bulk/${state.bulkJob}`,
        () => expect(page.getByTestId('bulk-status')).toHaveText('COMPLETED'),
      ],
      [
        'bulk-replays',
        '/settlements/bulk',
        () => expect(page.getByRole('table', { name: 'Bulk replays' }).locator('tbody tr').first()).toBeVisible(),
      ],
    ];
    for (const [name, path, ready] of pages) {
      await gotoInTheme(page, path, theme);
      await ready();
      await expectNoSeriousViolations(page);
      await captureScreenshot(page, `${name}-${theme}`);
    }
    // An open dialog is held to the same bar.
    await page.goto('/settlements/dead-letters');
    await page
      .getByRole('table', { name: 'Dead letters' })
      .getByRole('button', { name: /^Replay / })
      .first()
      .click();
    await expect(page.getByRole('alertdialog')).toBeVisible();
    await expectNoSeriousViolations(page);
  });
}
