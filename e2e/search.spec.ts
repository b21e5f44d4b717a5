import { createHash } from 'node:crypto';
import { expect, test, type Page } from '@playwright/test';
import { specDatabase } from './support/database';
import { signedInPages } from './support/session';

/**
 * Find anything by its id from the header (docs/console.md#search): one match opens it,
 * several are listed on /search by kind, and only what the role may open is listed.
 */

test.describe.configure({ mode: 'serial' });

const db = specDatabase(test);
const pageAs = signedInPages(test);

const searchBox = (page: Page) => page.getByRole('searchbox', { name: 'Find by id' });

async function find(page: Page, text: string) {
  await searchBox(page).fill(text);
  await searchBox(page).press('Enter');
}

const one = async <T>(text: string, params: unknown[] = []): Promise<T> => {
  const { rows } = await db.query(text, params);
  expect(rows.length, text).toBeGreaterThan(0);
  return rows[0] as T;
};

test('/ focuses the header search, keys typed there stay there, Escape leaves it', async ({ browser }) => {
  const page = await pageAs(browser, 'viewer');
  await page.keyboard.press('/');
  await expect(searchBox(page)).toBeFocused();
  // Inside the field `g e` is text, not the go-to-executions shortcut.
  await page.keyboard.press('g');
  await page.keyboard.press('e');
  await expect(searchBox(page)).toHaveValue('ge');
  await expect(page).toHaveURL(/\/$/);
  await page.keyboard.press('Escape');
  await expect(searchBox(page)).not.toBeFocused();
  await expect(searchBox(page)).toHaveValue('ge');
  // Out of the field the shortcuts work again.
  await page.keyboard.press('g');
  await page.keyboard.press('e');
  await expect(page).toHaveURL(/\/executions$/);
});

test('an execution id opens the execution; a job instance id lists its executions', async ({ browser }) => {
  const page = await pageAs(browser, 'viewer');
  // An id that is also its own instance's only execution, and no proposal's id: one page to open.
  const lone = await one<{ id: string }>(
    `select e.id from oxide_batch.ob_job_execution e
     where e.job_instance_id = e.id
       and not exists (select 1 from oxide_batch.ob_job_execution o where o.job_instance_id = e.id and o.id <> e.id)
       and not exists (select 1 from keel.recovery_proposal p where p.id = e.id)
     order by e.id limit 1`,
  );
  await find(page, lone.id);
  await expect(page).toHaveURL(new RegExp(`/executions/${lone.id}$`));
  await expect(page.getByRole('heading', { level: 1 })).toHaveText(`Execution ${lone.id}`);

  // An instance restarted at least once has several executions.
  const restarted = await one<{ instance: string; newest: string }>(
    `select job_instance_id as instance, max(id) as newest from oxide_batch.ob_job_execution
     group by job_instance_id having count(*) > 1 order by job_instance_id limit 1`,
  );
  await find(page, restarted.instance);
  await expect(page).toHaveURL(new RegExp(`/search\\?q=${restarted.instance}$`));
  const instances = page.getByRole('region', { name: 'Job instances' });
  await instances.getByRole('link', { name: `Instance ${restarted.instance}, execution ${restarted.newest}` }).click();
  await expect(page).toHaveURL(new RegExp(`/executions/${restarted.newest}$`));
});

test('a receipt id pasted in the executions search is offered to search everywhere, and opens from the header', async ({
  browser,
}) => {
  const page = await pageAs(browser, 'support');
  const { receipt_id: receipt } = await one<{ receipt_id: string }>(
    `select receipt_id from settle.dead_letters order by receipt_id limit 1`,
  );
  await page.goto('/executions');
  const filter = page.getByLabel('Search (execution or instance id)');
  await filter.fill(receipt);
  await filter.press('Enter');
  await page.getByRole('link', { name: `Search everywhere for “${receipt}”` }).click();
  await expect(page).toHaveURL(/\/search\?q=/);
  const receipts = page.getByRole('region', { name: 'Receipts' });
  await expect(receipts.getByText('dead-lettered')).toBeVisible();
  await receipts.getByRole('link', { name: `Receipt ${receipt}` }).click();
  await expect(page).toHaveURL(new RegExp(`/settlements/${receipt}$`));

  // From the header the one match opens at once.
  await page.goto('/');
  await find(page, receipt);
  await expect(page).toHaveURL(new RegExp(`/settlements/${receipt}$`));
});

test('a receipt id prefix lists the receipts that start with it', async ({ browser }) => {
  const page = await pageAs(browser, 'viewer');
  const { prefix, n } = await one<{ prefix: string; n: number }>(
    `select left(receipt_id, 7) as prefix, count(*)::int as n from settle.receipt_place group by 1
     having count(*) between 2 and 20 order by 2 desc limit 1`,
  );
  await find(page, prefix);
  await expect(page).toHaveURL(/\/search\?q=/);
  await expect(
    page.getByRole('region', { name: 'Receipts' }).getByRole('link', { name: new RegExp(`^Receipt ${prefix}`) }),
  ).toHaveCount(n);
});

test('a retry key prefix opens the execution whose step holds the key', async ({ browser }) => {
  const page = await pageAs(browser, 'viewer');
  const step = await one<{ key: string; execution: string }>(
    `select k.key, s.job_execution_id as execution
     from oxide_batch.ob_step_execution s, jsonb_path_query(s.fault_state_payload, 'lax $.entries[*].key') as j(k),
     lateral (select j.k #>> '{}' as key) k
     where k.key ~ '^[0-9a-f]{64}$' order by s.id limit 1`,
  );
  // Upper case and the 12 digits the retry-keys page shows.
  await find(page, step.key.slice(0, 12).toUpperCase());
  await expect(page).toHaveURL(new RegExp(`/executions/${step.execution}$`));
});

test('a proposal is found by its id and by the start of its evidence digest', async ({ browser }) => {
  const digest = createHash('sha256').update(`search spec ${Date.now()}`).digest();
  const target = await one<{ id: string; version: string }>(
    `select id, version from oxide_batch.ob_job_execution order by id desc limit 1`,
  );
  const proposal = await one<{ id: string }>(
    `insert into keel.recovery_proposal (target_kind, target_id, kind, evidence_digest, evidence, expected_version,
     proposer_id, proposer_login,
       status, decided_at, wait_owner, wait_deadline, wait_cancellation_id)
     values ('batch', $1, 'TAKEOVER', $2, '{}'::jsonb, $3, 'e2e-search', 'e2e-search', 'CANCELLED', now(), 'e2e-search',
     now(), 'e2e-search')
     returning id`,
    [target.id, digest, target.version],
  );
  const page = await pageAs(browser, 'viewer');
  await find(page, digest.toString('hex').slice(0, 10));
  await expect(page).toHaveURL(new RegExp(`/recovery/${proposal.id}$`));

  await page.goto('/');
  await find(page, proposal.id);
  await expect(page).toHaveURL(new RegExp(`/search\\?q=${proposal.id}$`));
  await page
    .getByRole('region', { name: 'Recovery proposals' })
    .getByRole('link', { name: `Recovery proposal ${proposal.id}` })
    .click();
  await expect(page).toHaveURL(new RegExp(`/recovery/${proposal.id}$`));
});

test('a runtime operation id opens the execution it acted on', async ({ browser }) => {
  const page = await pageAs(browser, 'operator');
  const request = await one<{ operation_id: string; execution: string }>(
    `select r.operation_id, r.job_execution_id as execution from oxide_batch.ob_operator_request r
     where r.job_execution_id is not null and r.action = 'ABANDON'
       and not exists (select 1 from keel.audit_event a where a.operation_id = r.operation_id)
       and (select count(*) from oxide_batch.ob_operator_request o where o.operation_id = r.operation_id) = 1
     order by r.id limit 1`,
  );
  await find(page, request.operation_id);
  await expect(page).toHaveURL(new RegExp(`/executions/${request.execution}$`));
});

test('users are found by an admin only', async ({ browser }) => {
  const admin = await pageAs(browser, 'admin');
  await find(admin, 'Approver2');
  await expect(admin).toHaveURL(/\/users#user-approver2$/);
  const asAdmin = await admin.request.get('/api/search?q=viewer');
  expect((await asAdmin.json()).groups.map((g: { kind: string }) => g.kind)).toContain('user');

  const viewer = await pageAs(browser, 'viewer');
  await find(viewer, 'approver2');
  await expect(viewer).toHaveURL(/\/search\?q=approver2$/);
  await expect(viewer.getByTestId('search-summary')).toHaveText('Nothing has the id “approver2”.');
  await expect(viewer.getByRole('region', { name: 'Users' })).toHaveCount(0);
  const asViewer = await viewer.request.get('/api/search?q=admin');
  expect(asViewer.status()).toBe(200);
  expect((await asViewer.json()).groups.map((g: { kind: string }) => g.kind)).not.toContain('user');
});

test('bad search text is refused with a typed 400, and the results page names the problem', async ({ browser }) => {
  const page = await pageAs(browser, 'viewer');
  for (const q of ['', '   ', 'a\u0007b', 'x'.repeat(1_001)]) {
    const answer = await page.request.get(`/api/search?q=${encodeURIComponent(q)}`);
    expect(answer.status(), JSON.stringify(q)).toBe(400);
    const body = await answer.json();
    expect(body.code).toBe('INVALID_INPUT');
    expect(Object.keys(body.fieldErrors)).toEqual(['q']);
  }
  expect((await page.request.get('/api/search')).status()).toBe(400);
  await page.goto(`/search?q=${'x'.repeat(1_001)}`);
  await expect(page.getByRole('alert').filter({ hasText: 'Could not search' })).toContainText(
    'INVALID_INPUT: At most 1,000 characters.',
  );
});
