import { expect, test, type Page } from '@playwright/test';
import { expectNoSeriousViolations, gotoInTheme } from './support/axe';
import { e2eDatabase } from './support/database';
import { signIn } from './support/session';
import { captureScreenshot } from './support/screenshots';

test.use({ viewport: { width: 1440, height: 900 } });
test.describe.configure({ mode: 'serial' });

/** The pages operators and approvers work in, each checked with axe and captured in both themes. */
async function pagesToCheck(
  page: Page,
): Promise<{ name: string; path: string; heading: string | RegExp; fullPage?: boolean }[]> {
  const db = await e2eDatabase();
  try {
    // One with an operator history worth showing: its CLI launch and a refused request.
    const stale = await db.query(`select e.id from oxide_batch.ob_job_execution e where e.status = 'STARTED'
      and e.updated_at < clock_timestamp() - interval '30 minutes'
      and not exists (select 1 from keel.recovery_proposal p where p.target_id = e.id::text)
      and exists (select 1 from oxide_batch.ob_operator_request r where r.job_execution_id = e.id
      and r.outcome_class = 'REJECTED')
      order by e.id desc limit 1`);
    const executionId = Number(stale.rows[0].id);
    // A pending proposal to look at: made through the page, as an operator would.
    await page.goto(`/executions/${executionId}`);
    await page.getByRole('button', { name: 'Request takeover' }).click();
    await page.getByRole('alertdialog').getByLabel('Reason for the request').fill('The worker host stopped answering.');
    await page.getByRole('alertdialog').getByRole('button', { name: 'Create proposal' }).click();
    await expect(page).toHaveURL(/\/recovery\/\d+$/);
    const proposalPath = new URL(page.url()).pathname;
    return [
      { name: 'overview', path: '/', heading: 'Overview' },
      { name: 'executions', path: '/executions', heading: 'Executions' },
      { name: 'execution', path: `/executions/${executionId}`, heading: `Execution ${executionId}`, fullPage: true },
      { name: 'retry-keys', path: '/retry-keys', heading: 'Retry keys' },
      { name: 'recovery', path: '/recovery', heading: 'Recovery' },
      { name: 'proposal', path: proposalPath, heading: /^Proposal \d+$/, fullPage: true },
      { name: 'preferences', path: '/preferences', heading: 'Preferences' },
    ];
  } finally {
    await db.end();
  }
}

test('overview, executions, retry keys, recovery: no serious accessibility violations, light and dark', async ({
  page,
}) => {
  test.setTimeout(180_000);
  await signIn(page, 'operator');
  const pages = await pagesToCheck(page);
  for (const theme of ['light', 'dark'] as const) {
    for (const entry of pages) {
      await gotoInTheme(page, entry.path, theme);
      await expect(page.getByRole('heading', { level: 1, name: entry.heading })).toBeVisible();
      await expectNoSeriousViolations(page);
      await captureScreenshot(page, `${entry.name}-${theme}`, { fullPage: entry.fullPage });
    }
  }
});

test('a proposal shows its evidence in words, each marker, the digest to copy, the raw evidence a click away', async ({
  page,
}) => {
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
  await signIn(page, 'operator');
  const db = await e2eDatabase();
  let proposalId: number;
  try {
    const { rows } = await db.query(
      `select id from keel.recovery_proposal where status = 'PENDING' and target_kind = 'batch' order by id desc
       limit 1`,
    );
    proposalId = Number(rows[0].id);
  } finally {
    await db.end();
  }
  await page.goto(`/recovery/${proposalId}`);
  const evidence = page.getByRole('region', { name: 'Evidence' });
  await expect(evidence.getByRole('term')).toHaveText([
    'Last update',
    'Inactive for',
    'Server clock offset',
    'Owner',
    'Latest step',
    'Execution',
  ]);
  await expect(evidence.getByRole('definition').nth(0)).toContainText(/ago · \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC/);
  await expect(evidence.getByRole('definition').nth(1)).toContainText(
    /^\d+ (d|h|min)( \d+ (h|min|s))?Stale means more than 15 min: above the threshold when read\.$/,
  );
  await expect(evidence.getByRole('definition').nth(2)).toContainText(/^\d+ (ms|s).*The read took \d+ ms\.$/);
  await expect(evidence.getByRole('definition').nth(3)).toContainText(/^(Another process|Absent)/);
  await expect(evidence.getByRole('definition').nth(4)).toContainText(/#\d+ STARTED/);
  const markers = evidence.getByRole('list', { name: 'Markers' }).getByRole('listitem');
  await expect(markers).toHaveCount(4);
  await expect(markers.nth(0)).toContainText('unknown_commit');
  await expect(markers.nth(3)).toContainText('ambiguous_external_effect');
  // No raw field names or epoch milliseconds until the disclosure is opened.
  await expect(page.getByText('updatedAtMs')).toBeHidden();
  const digest = (await page.getByTestId('evidence-digest').textContent())!;
  expect(digest).toMatch(/^[0-9a-f]{64}$/);
  await evidence.getByRole('button', { name: 'Copy evidence digest' }).click();
  await expect(evidence.getByRole('button', { name: 'Copy evidence digest' })).toHaveText('Copied');
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(digest);
  await evidence.getByText('Raw evidence and digest input').click();
  const inputs = evidence.getByRole('table', { name: 'Digest input' });
  await expect(inputs.getByRole('row').nth(1)).toContainText('oxide-batch.recovery-evidence.v1');
  await expect(evidence).toContainText('Recomputed from them, it equals the proposal’s digest.');
  await expect(evidence.getByLabel('Stored evidence (JSON)')).toContainText('"updatedAtMs"');
  await expectNoSeriousViolations(page);
});

test('an execution shows the runtime operator history: actor, origin, outcome, rejection and digest', async ({
  page,
}) => {
  await signIn(page, 'viewer');
  const db = await e2eDatabase();
  let executionId: number;
  try {
    const { rows } = await db.query(`select job_execution_id as id from oxide_batch.ob_operator_request
      where outcome_class = 'REJECTED' and action = 'STOP' order by job_execution_id desc limit 1`);
    executionId = Number(rows[0].id);
  } finally {
    await db.end();
  }
  await page.goto(`/executions/${executionId}`);
  const history = page.getByRole('table', { name: 'Operator requests' });
  await expect(history.getByRole('columnheader')).toHaveText([
    'Requested (UTC)',
    'Action / class',
    'Outcome',
    'Actor',
    'Origin',
    'Observed version',
    'Status',
    'Reason',
    'Digest',
  ]);
  // Newest first: the refused STOP came after the launch.
  await expect(history.getByRole('row').nth(1)).toContainText('STOPLIFECYCLE');
  await expect(history.getByRole('row').nth(1)).toContainText('REJECTEDOPTIMISTIC_CONFLICT');
  await expect(history.getByRole('row').nth(2)).toContainText('LAUNCH');
  await expect(history.getByRole('row').nth(2)).toContainText('new → STARTING');
  await expect(history.getByRole('cell', { name: 'Runtime CLI' })).toHaveCount(2);
  await expect(history.getByRole('button', { name: /^Copy digest [0-9a-f]{64}$/ })).toHaveCount(2);
  await expect(history.getByRole('row').nth(1).getByRole('cell').nth(3)).toHaveText(/^cli:/);
  await expectNoSeriousViolations(page);
});

test('keyboard: ? lists the shortcuts, / focuses the header search, g e goes to executions', async ({ page }) => {
  await signIn(page, 'viewer');
  await page.keyboard.press('?');
  await expect(page.getByRole('dialog', { name: 'Keyboard shortcuts' })).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(page.getByRole('dialog', { name: 'Keyboard shortcuts' })).toBeHidden();
  await page.keyboard.press('g');
  await page.keyboard.press('e');
  await expect(page).toHaveURL(/\/executions$/);
  await page.keyboard.press('/');
  await expect(page.getByRole('searchbox', { name: 'Find by id' })).toBeFocused();
  await page.keyboard.press('Escape');
  await page.getByLabel('Search (execution or instance id)').focus();
  await page.keyboard.type('42');
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(/q=42/);
  await expect(page.getByRole('link', { name: '42', exact: true })).toBeVisible();
});
