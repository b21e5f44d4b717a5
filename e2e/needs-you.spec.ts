import { expect, type Page, test } from '@playwright/test';
import { expectNoSeriousViolations, useTheme } from './support/axe';
import { specDatabase } from './support/database';
import { signedInPages } from './support/session';
import { captureScreenshot } from './support/screenshots';

/**
 * "Needs you" on the overview and as a count beside Overview in the navigation: read
 * once by the server for every tab and pushed through the event stream, so a proposal
 * one user makes is in another approver's view within two seconds.
 */

const db = specDatabase(test);
const pageAs = signedInPages(test);

const navCount = async (page: Page): Promise<number> => {
  const badge = page.getByRole('navigation', { name: 'Main' }).getByTestId('needs-you-count');
  return (await badge.count()) === 0 ? 0 : Number(await badge.getAttribute('data-count'));
};
const pendingCard = (page: Page) =>
  page.getByRole('region', { name: 'Totals' }).getByRole('link', { name: /Pending proposals/ });

test('a proposal created by one user shows in another approver’s view within 2 s', async ({ browser }) => {
  const { rows } = await db.query<{ id: string }>(`select e.id::text from oxide_batch.ob_job_execution e
    where e.status = 'STARTED' and e.updated_at < clock_timestamp() - interval '30 minutes'
      and not exists (select 1 from keel.recovery_proposal p where p.target_id = e.id::text and p.status = 'PENDING')
    order by e.id limit 1`);
  const executionId = rows[0]!.id;

  const approver = await pageAs(browser, 'approver2');
  await approver.goto('/');
  await expect(approver.getByTestId('live-status')).toHaveAttribute('data-mode', 'live');
  await expect(approver.getByRole('heading', { name: 'Proposals to decide' })).toBeVisible();
  const before = await navCount(approver);
  const pendingBefore = Number(((await pendingCard(approver).textContent()) ?? '').replace(/\D/g, ''));

  const operator = await pageAs(browser, 'operator');
  await operator.goto(`/executions/${executionId}`);
  await operator.getByRole('button', { name: 'Request takeover' }).click();
  await operator.getByRole('alertdialog').getByLabel('Reason for the request').fill('Its worker host is gone.');
  await operator.getByRole('alertdialog').getByRole('button', { name: 'Create proposal' }).click();
  await expect(operator).toHaveURL(/\/recovery\/\d+$/);
  const created = Date.now();
  const proposalId = operator.url().split('/').pop()!;

  // Pushed, not polled: within 2 s of the proposal's page opening for its proposer.
  const proposal = approver
    .getByTestId('needs-you-proposal')
    .and(approver.locator(`[data-proposal-id="${proposalId}"]`));
  await expect(proposal).toBeVisible({ timeout: 2_000 });
  await expect
    .poll(() => navCount(approver), { timeout: Math.max(1, 2_000 - (Date.now() - created)) })
    .toBe(before + 1);
  await expect(pendingCard(approver)).toContainText(String(pendingBefore + 1), { timeout: 500 });
  expect(Date.now() - created).toBeLessThan(2_000);
  await expect(proposal).toContainText(/takeover of execution/);
  await expect(proposal).toContainText(/\d+ min \d\d s left/);
  await expect(proposal.getByRole('link', { name: `Proposal ${proposalId}` })).toHaveAttribute(
    'href',
    `/recovery/${proposalId}`,
  );
  const item = approver.getByTestId('needs-you-item-proposals');
  await expect(item.getByRole('link', { name: /Open the list/ })).toHaveAttribute('href', '/recovery?status=PENDING');
  await expect(item).toContainText('docs/alerts.md#keelproposalneardeadline');

  // The proposer's own view has no approve section; a viewer's none at all, yet the live total.
  await operator.goto('/');
  await expect(operator.getByRole('heading', { name: 'Executions and orchestrations' })).toBeVisible();
  await expect(operator.getByRole('heading', { name: 'Proposals to decide' })).toHaveCount(0);
  const viewer = await pageAs(browser, 'viewer');
  await viewer.goto('/');
  await expect(viewer.getByTestId('needs-you')).toContainText('Nothing waits on a viewer');
  await expect(pendingCard(viewer)).toContainText(String(pendingBefore + 1));

  // Decided, it leaves the approver's view as fast.
  await db.query(
    `update keel.recovery_proposal set status = 'CANCELLED', decided_at = clock_timestamp() where id = $1`,
    [proposalId],
  );
  await expect(proposal).toHaveCount(0, { timeout: 2_000 });
});

test('support sees a dead-letter reason rising against the hour before; all clear says what it covers', async ({
  browser,
}) => {
  const support = await pageAs(browser, 'support');
  await support.goto('/');
  await expect(support.getByRole('region', { name: 'Dead letters', exact: true })).toBeVisible();
  // Nothing dead-letters in the e2e database (no demo runtime): the section says what all clear covers.
  await expect(support.getByTestId('needs-you-support-all-clear')).toContainText(
    'No dead-letter reason rose in the last hour against the hour before.',
  );
  // The counter's history an hour and two ago (the e2e server is younger than that): 5 dead-lettered in that hour.
  const { rows } = await db.query<{ n: number }>(
    `select count(*)::int as n from keel.settlement_event where kind = 'dead_lettered' and reason_code = 'rpc'`,
  );
  const before = rows[0]!.n;
  const history = await db.query<{ id: string }>(
    `with clock as (select clock_timestamp() as now)
     insert into keel.metric_sample (sampled_at, metric, label, value)
     select clock.now - s.ago, 'settlement_dead_lettered', 'rpc', s.value from clock,
       (values (interval '2 hours', $1::float8 - 5), (interval '1 hour', $1),
       (interval '20 minutes', $1)) as s(ago, value)
     returning id::text`,
    [before],
  );
  // Then 60 settlements dead-letter for rpc now, as the settlement store records them; the next sample counts them.
  await db.query(`insert into keel.settlement_event (receipt_id, kind, attempt, reason_code, at_ms)
    select 'needs-you-e2e-' || g, 'dead_lettered', 6, 'rpc', (extract(epoch from clock_timestamp()) * 1000)::bigint
    from generate_series(1, 60) g`);
  try {
    const item = support.getByTestId('needs-you-item-deadLetters:rpc');
    await expect(item).toBeVisible({ timeout: 30_000 }); // the sampler's next sample, every 15 s, announces it
    await expect(item).toContainText('+55 since an hour ago'); // 60 in the last hour against 5 the hour before
    await expect(item).toContainText('Alert'); // more than KEEL_DEAD_LETTER_ALERT_THRESHOLD (50) in its window
    await expect(item.getByRole('link', { name: /Open the list/ })).toHaveAttribute(
      'href',
      '/settlements/dead-letters?reason=rpc',
    );
    await expect(item).toContainText('docs/alerts.md#keeldeadlettersgrowing');
    await expect(support.getByRole('navigation', { name: 'Main' }).getByTestId('needs-you-count')).toHaveAttribute(
      'data-count',
      '1',
    );
  } finally {
    await db.query(`delete from keel.settlement_event where receipt_id like 'needs-you-e2e-%'`);
    await db.query(`delete from keel.metric_sample where id = any($1::bigint[])`, [history.rows.map((r) => r.id)]);
  }
});

for (const viewport of [
  { width: 1440, height: 900 },
  { width: 390, height: 844 },
]) {
  test(`the overview with every section (admin) passes axe at ${viewport.width} px, light and dark`, async ({
    browser,
  }) => {
    const admin = await pageAs(browser, 'admin');
    await admin.setViewportSize(viewport);
    await admin.goto('/');
    for (const theme of ['light', 'dark'] as const) {
      await useTheme(admin, theme);
      await expect(admin.getByRole('heading', { name: 'Needs you' })).toBeVisible();
      await expect(admin.getByRole('heading', { level: 3 })).toHaveCount(3);
      await expectNoSeriousViolations(admin);
      const suffix = viewport.width === 1440 ? '' : `-${viewport.width}`;
      await captureScreenshot(admin, `needs-you${suffix}-${theme}`);
    }
  });
}
