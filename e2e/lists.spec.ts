import { expect, test } from '@playwright/test';
import { specDatabase } from './support/database';
import { signIn } from './support/session';

/** The lists as a person moves between them: overview links, empty filters, pagers, the settlement tabs. */
test.use({ viewport: { width: 1440, height: 900 } });

const db = specDatabase(test);

test('overview cards and count tables link to the filtered lists', async ({ page }) => {
  await signIn(page, 'viewer');
  await page.goto('/');
  const totals = page.getByRole('region', { name: 'Totals' });
  await totals.getByRole('link', { name: /Stale executions/ }).click();
  await expect(page).toHaveURL(/\/executions\?stale=1$/);
  await expect(page.getByRole('checkbox', { name: /stale/i })).toBeChecked();

  await page.goto('/');
  await totals.getByRole('link', { name: /Pending proposals/ }).click();
  await expect(page).toHaveURL(/\/recovery\?status=PENDING$/);

  await page.goto('/');
  const { rows } = await db.query<{ reason: string }>(
    `select reason from settle.dead_letters group by reason order by count(*) desc, reason limit 1`,
  );
  const reason = rows[0]!.reason;
  await page
    .getByRole('table', { name: 'Dead letters by reason' })
    .getByRole('link', { name: reason, exact: true })
    .click();
  await expect(page).toHaveURL(new RegExp(`/settlements/dead-letters\\?reason=${reason}$`));
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Dead letters');

  await page.goto('/');
  await page
    .getByRole('table', { name: 'Executions by status' })
    .getByRole('link', { name: /^FAILED: / })
    .click();
  await expect(page).toHaveURL(/\/executions\?status=FAILED$/);
});

test('a filter that matches nothing says so and clears in one click; a disabled pager button looks disabled', async ({
  page,
}) => {
  await signIn(page, 'support');
  await page.goto('/settlements/dead-letters?q=no-such-receipt-prefix');
  const table = page.getByRole('table', { name: 'Dead letters' });
  await expect(table).toContainText('No dead letters match these filters.');
  await expect(table).not.toContainText('Nothing here yet');
  await table.getByRole('button', { name: 'Clear filters' }).click();
  await expect(page).toHaveURL(/\/settlements\/dead-letters$/);
  await expect(table.getByRole('row')).not.toHaveCount(1);

  const pager = page.getByRole('navigation', { name: 'Dead letter pages' });
  const first = pager.getByRole('button', { name: 'First page' });
  const next = pager.getByRole('button', { name: 'Next page' });
  await expect(first).toBeDisabled();
  await expect(next).toBeEnabled();
  const look = (button: typeof first) =>
    button.evaluate((b) => ({ border: getComputedStyle(b).borderStyle, color: getComputedStyle(b).color }));
  const [disabled, enabled] = [await look(first), await look(next)];
  expect(disabled.border).toBe('dashed');
  expect(enabled.border).toBe('solid');
  expect(disabled.color).not.toBe(enabled.color);

  await page.goto('/executions?q=999999999');
  await expect(page.getByRole('table', { name: 'Executions' })).toContainText('No executions match these filters.');
});

test('settlements: one row of tabs, and the page opens on the state that has rows', async ({ page }) => {
  await signIn(page, 'support');
  // A receipt waiting for a retry, alone under its own prefix: under that filter nothing is due.
  const { rows } = await db.query<{ receipt_id: string }>(
    `select receipt_id from settle.attempts
     where work_kind = 'retry_scheduled'
       and next_visible_at_ms > (extract(epoch from clock_timestamp()) * 1000)::bigint + 600000
       and lease_owner is null order by receipt_id limit 1`,
  );
  const receipt = rows[0]!.receipt_id;
  await page.goto(`/settlements?q=${encodeURIComponent(receipt)}`);
  const tabs = page.getByRole('navigation', { name: 'Settlement views' });
  await expect(page).toHaveURL(/state=retry_scheduled/);
  await expect(tabs.getByRole('link', { name: /^Retry scheduled \(1\)$/ })).toHaveAttribute('aria-current', 'page');
  await expect(page.getByRole('table', { name: 'Settlement queue' })).toContainText(receipt);
  await expect(page.getByRole('navigation', { name: 'Queue states' })).toHaveCount(0);
  await expect(tabs.getByRole('link')).toHaveText([
    /^Due/,
    /^Leased/,
    /^Retry scheduled/,
    'All queued',
    /^Dead letters/,
    'Bulk replays',
  ]);

  // Due chosen by hand stays Due, empty or not, and says the filter matches nothing.
  await tabs.getByRole('link', { name: /^Due/ }).click();
  await expect(page).toHaveURL(/state=due/);
  await expect(page.getByRole('table', { name: 'Settlement queue' })).toContainText(
    'No settlements match these filters.',
  );
  // The filter carries over to the dead letters tab.
  await tabs.getByRole('link', { name: /^Dead letters/ }).click();
  await expect(page).toHaveURL(new RegExp(`/settlements/dead-letters\\?q=${receipt}`));
});

test('retry keys: the keys tab does not wait for the corrupt count, whose label keeps its room meanwhile', async ({
  page,
}) => {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const corruptReads: string[] = [];
  await page.route(/\/api\/retry-keys\?.*only=corrupt/, async (route) => {
    corruptReads.push(route.request().url());
    await released;
    await route.continue();
  });
  await signIn(page, 'viewer');
  await page.goto('/retry-keys');
  const tabs = page.getByRole('navigation', { name: 'Retry key lists' });
  // The keys are on the page while the corrupt count is still on its way.
  await expect(page.getByRole('table', { name: 'Unresolved retry keys' }).locator('tbody tr').first()).toBeVisible();
  await expect.poll(() => corruptReads.length).toBe(1);
  const label = tabs.getByRole('link', { name: /^Corrupt envelopes$/ });
  await expect(label).toBeVisible();
  const waiting = (await label.boundingBox())!;
  release();
  const counted = tabs.getByRole('link', { name: /^Corrupt envelopes \(\d+\+?\)$/ });
  await expect(counted).toBeVisible();
  const shown = (await counted.boundingBox())!;
  expect(Math.abs(shown.width - waiting.width)).toBeLessThan(0.5);
  expect(shown.y).toBe(waiting.y);
});

test('retry keys: the corrupt envelopes have a tab of their own, and each copy button names the key it copies', async ({
  page,
}) => {
  await signIn(page, 'viewer');
  await page.goto('/retry-keys');
  const tabs = page.getByRole('navigation', { name: 'Retry key lists' });
  await expect(tabs.getByRole('link', { name: 'Unresolved keys' })).toHaveAttribute('aria-current', 'page');
  await expect(page.getByRole('table', { name: 'Corrupt fault-state envelopes' })).toHaveCount(0);
  const keys = page.getByRole('table', { name: 'Unresolved retry keys' });
  const firstKey = (await keys.locator('tbody tr').first().locator('td').first().textContent())!.split('…')[0]!;
  await expect(keys.getByRole('button', { name: `Copy retry key ${firstKey}` })).toHaveCount(1);

  await tabs.getByRole('link', { name: /^Corrupt envelopes \(\d+\+?\)$/ }).click();
  await expect(page).toHaveURL(/show=corrupt/);
  // The corrupt tab's page renders its own list: its label has the count at once.
  await expect(tabs.getByRole('link', { name: /^Corrupt envelopes \(\d+\+?\)$/ })).toHaveAttribute(
    'aria-current',
    'page',
  );
  await expect(page.getByRole('table', { name: 'Corrupt fault-state envelopes' })).toContainText('CORRUPT');
  await expect(page.getByRole('table', { name: 'Unresolved retry keys' })).toHaveCount(0);
});
