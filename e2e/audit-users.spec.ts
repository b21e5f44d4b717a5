import { readFile } from 'node:fs/promises';
import { expect, test, type Browser, type Page, type Request } from '@playwright/test';
import { expectNoSeriousViolations, gotoInTheme } from './support/axe';
import { e2eDatabase } from './support/database';
import { signIn, DEMO_PASSWORD } from './support/session';
import { captureScreenshot } from './support/screenshots';

test.use({ viewport: { width: 1440, height: 900 } });
test.describe.configure({ mode: 'serial' });

const NEW_USER = 'dana.e2e';
const NEW_PASSWORD = 'dana-e2e-password';

/** A server action POST as the browser sent it, to replay with someone else's cookies. */
interface CapturedAction {
  id: string;
  contentType: string;
  body: string;
}
const captured: Partial<Record<'create' | 'disable', CapturedAction>> = {};

async function capture(page: Page, act: () => Promise<void>): Promise<CapturedAction> {
  const [request] = await Promise.all([
    page.waitForRequest((r: Request) => r.method() === 'POST' && Boolean(r.headers()['next-action'])),
    act(),
  ]);
  const headers = await request.allHeaders();
  return {
    id: headers['next-action']!,
    contentType: headers['content-type'] ?? 'text/plain;charset=UTF-8',
    body: request.postData() ?? '',
  };
}

async function newSignedInPage(browser: Browser, username: string, password = DEMO_PASSWORD): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  await signIn(page, username, password);
  return page;
}

const toast = (page: Page) => page.getByTestId('toast').first();

test('an admin creates a user, changes their role and disables them, who is signed out at once', async ({
  page,
  browser,
}) => {
  await signIn(page, 'admin');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Users' }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Users' })).toBeVisible();

  await page.getByLabel('Username', { exact: true }).fill(NEW_USER);
  await page.getByLabel('Name', { exact: true }).fill('Dana Example');
  await page.getByLabel('Role', { exact: true }).selectOption('viewer');
  await page.getByLabel('Initial password').fill(NEW_PASSWORD);
  await page.getByRole('button', { name: 'Create user…' }).click();
  const dialog = page.getByRole('alertdialog');
  await expect(dialog.getByRole('heading', { name: `Create user ${NEW_USER}?` })).toBeVisible();
  await expect(dialog).toContainText('with the role viewer: reads every page and changes nothing');
  captured.create = await capture(page, () => dialog.getByRole('button', { name: 'Create user' }).click());
  await expect(toast(page)).toContainText(`Created ${NEW_USER}`);
  const row = page.getByRole('row').filter({ hasText: NEW_USER });
  await expect(row.getByLabel(`Role of ${NEW_USER}`)).toHaveValue('viewer');
  await expect(row).toContainText('active');

  // The new user signs in in their own browser.
  const dana = await newSignedInPage(browser, NEW_USER, NEW_PASSWORD);
  await expect(dana.getByTestId('signed-in-role')).toHaveText('viewer');

  await row.getByLabel(`Role of ${NEW_USER}`).selectOption('operator');
  await expect(dialog.getByRole('heading', { name: `Change ${NEW_USER}'s role?` })).toBeVisible();
  await expect(dialog).toContainText('From viewer to operator');
  await dialog.getByRole('button', { name: 'Make operator' }).click();
  await expect(toast(page)).toContainText(`${NEW_USER} is now operator`);
  await expect(row.getByLabel(`Role of ${NEW_USER}`)).toHaveValue('operator');
  // Dana's open page hears its session's role change on its event stream and reloads by itself.
  await expect(dana.getByTestId('signed-in-role')).toHaveText('operator');

  await row.getByRole('button', { name: `Disable ${NEW_USER}` }).click();
  await expect(dialog).toContainText('is signed out at once');
  await dialog.getByLabel(/Reason/).fill('left the team');
  captured.disable = await capture(page, () => dialog.getByRole('button', { name: 'Disable user' }).click());
  await expect(toast(page)).toContainText(`Disabled ${NEW_USER}`);
  await expect(toast(page)).toContainText('Signed out of 1 session.');
  await expect(row).toContainText('disabled');
  await expect(row.getByRole('button', { name: `Enable ${NEW_USER}` })).toBeVisible();

  // Signed out at once: the open page's event stream ends and it goes to sign-in by itself.
  await expect(dana).toHaveURL(/\/sign-in/);
  await dana.getByLabel('Username').fill(NEW_USER);
  await dana.getByLabel('Password').fill(NEW_PASSWORD);
  await dana.getByRole('button', { name: 'Sign in', exact: true }).click();
  await expect(dana.locator('form').getByRole('alert')).toHaveText('This account is disabled.');
  await dana.context().close();

  // A second user with the same name is refused, naming the code.
  await page.getByLabel('Username', { exact: true }).fill(NEW_USER);
  await page.getByLabel('Name', { exact: true }).fill('Another Dana');
  await page.getByLabel('Initial password').fill('another-password');
  await page.getByRole('button', { name: 'Create user…' }).click();
  await dialog.getByRole('button', { name: 'Create user' }).click();
  await expect(toast(page)).toContainText('Refused: USER_EXISTS');

  // The admin cannot disable or demote themself from the page.
  const self = page.getByRole('row').filter({ hasText: '(you)' });
  await expect(self.getByLabel('Role of admin')).toBeDisabled();
  await expect(self).toContainText('You cannot disable yourself');
});

test('a non-admin has no Users page, and a forged user action is refused and changes nothing', async ({
  page,
  baseURL,
}) => {
  expect(captured.create && captured.disable).toBeTruthy();
  const db = await e2eDatabase();
  try {
    const lastAuditId = async () =>
      Number((await db.query(`select coalesce(max(id), 0) as n from keel.audit_event`)).rows[0].n);
    const before = await lastAuditId();
    await signIn(page, 'operator');
    await expect(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Users' })).toHaveCount(0);
    await page.goto('/users');
    await expect(page.getByRole('heading', { name: 'Admins only' })).toBeVisible();
    await expect(page.getByText('403 FORBIDDEN')).toBeVisible();
    await expect(page.getByRole('table', { name: 'Users' })).toHaveCount(0);
    const api = await page.request.get('/api/users');
    expect(api.status()).toBe(403);
    expect(await api.json()).toMatchObject({ code: 'FORBIDDEN' });

    // Replay the admin's own action requests with the operator's cookies.
    const replay = (action: CapturedAction, body: string) =>
      page.request.post('/users', {
        headers: {
          'next-action': action.id,
          'content-type': action.contentType,
          accept: 'text/x-component',
          origin: baseURL!,
        },
        data: body,
      });
    const forgedCreate = await replay(captured.create!, captured.create!.body.replaceAll(NEW_USER, 'forged.e2e'));
    expect(forgedCreate.status()).toBe(200);
    expect(await forgedCreate.text()).toContain('FORBIDDEN');
    const forgedDisable = await replay(captured.disable!, captured.disable!.body.replaceAll(NEW_USER, 'admin'));
    expect(await forgedDisable.text()).toContain('FORBIDDEN');

    // The same calls from inside the operator's page, as a script on the page would make them.
    const fromPage = await page.evaluate(
      async ({ id, contentType, body }) => {
        const response = await fetch('/users', {
          method: 'POST',
          headers: { 'next-action': id, 'content-type': contentType, accept: 'text/x-component' },
          body,
        });
        return response.text();
      },
      { ...captured.disable!, body: captured.disable!.body.replaceAll(NEW_USER, 'approver') },
    );
    expect(fromPage).toContain('FORBIDDEN');

    expect((await db.query(`select count(*)::int as n from keel.user where username = 'forged.e2e'`)).rows[0].n).toBe(
      0,
    );
    expect(
      (
        await db.query(
          `select username, banned from keel.user where username in ('admin', 'approver') order by username`,
        )
      ).rows,
    ).toEqual([
      { username: 'admin', banned: false },
      { username: 'approver', banned: false },
    ]);
    // Each forged call is audited as a refusal, and nothing was applied.
    const since = await db.query(`select actor_login, outcome, code from keel.audit_event where id > $1 order by id`, [
      before,
    ]);
    expect(since.rows).toEqual(
      Array.from({ length: 3 }, () => ({ actor_login: 'operator', outcome: 'REFUSED', code: 'FORBIDDEN' })),
    );
  } finally {
    await db.end();
  }
});

test('an admin sees those actions with actor and outcome on the audit page and in its CSV; a viewer, none', async ({
  page,
}) => {
  await signIn(page, 'admin');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit' }).click();
  await page.getByLabel('Actor').fill('admin');
  await page.getByLabel('Target kind').fill('user');
  await page.getByLabel('Target id').fill(NEW_USER);
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await expect(page).toHaveURL(/actor=admin/);
  await expect(page).toHaveURL(/targetKind=user/);
  const table = page.getByRole('table', { name: 'Audit events' });
  const rows = table.locator('tbody tr[data-audit-id]');
  await expect(rows).toHaveCount(4);
  await expect(page.getByTestId('audit-count')).toContainText('4 events match');
  // Newest first: the refused duplicate, the disable, the role change, the creation.
  const cells = async () =>
    rows.evaluateAll((trs) =>
      trs.map((tr) => Array.from(tr.querySelectorAll('td'), (td) => td.textContent?.trim() ?? '')),
    );
  const shown = await cells();
  expect(shown.map((c) => [c[1], c[2], c[3], c[7]])).toEqual([
    ['admin', 'admin', 'user.create', 'REFUSEDUSER_EXISTS'],
    ['admin', 'admin', 'user.disable', 'APPLIED'],
    ['admin', 'admin', 'user.role', 'APPLIED'],
    ['admin', 'admin', 'user.create', 'APPLIED'],
  ]);
  expect(shown[1]![6]).toBe('left the team');
  // The change column: what each change changed, old and new.
  expect(shown.map((c) => c[5])).toEqual(['—', 'disabled: false → true', 'role: viewer → operator', '—']);
  // The target links to the user's row on the users page.
  await expect(rows.nth(2).getByRole('link', { name: `user ${NEW_USER}` })).toHaveAttribute(
    'href',
    `/users#user-${NEW_USER}`,
  );
  expect(shown[0]![0]).toMatch(/ago|just now/);
  // The zone is named once, in the column's heading (the user's zone; UTC unless they chose another).
  expect(shown[0]![0]).toMatch(/· \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
  await expect(table.getByRole('columnheader').first()).toHaveText('Time (UTC)');

  // The filters live in the URL: a reload shows the same view with the form filled in.
  await page.reload();
  await expect(rows).toHaveCount(4);
  await expect(page.getByLabel('Target id')).toHaveValue(NEW_USER);

  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('link', { name: 'Export CSV (filtered)' }).click(),
  ]);
  const csv = await readFile((await download.path())!, 'utf8');
  const lines = csv.trimEnd().split('\r\n');
  expect(lines[0]).toBe(
    'id,at_utc,actor,role,action,target_kind,target_id,reason,outcome,code,digest,operation_id,request_id,change,' +
      'before,after',
  );
  // The role change's line ends with the change and the before and after values as JSON.
  expect(lines[3]).toMatch(/,role: viewer → operator,"\{""role"":""viewer""\}","\{""role"":""operator""\}"$/);
  const exported = lines.slice(1).map((l) => l.split(','));
  const ids = await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-audit-id')));
  expect(exported.map((f) => f[0])).toEqual(ids);
  expect(exported.map((f) => [f[2], f[4], f[6], f[8], f[9]])).toEqual([
    ['admin', 'user.create', NEW_USER, 'REFUSED', 'USER_EXISTS'],
    ['admin', 'user.disable', NEW_USER, 'APPLIED', ''],
    ['admin', 'user.role', NEW_USER, 'APPLIED', ''],
    ['admin', 'user.create', NEW_USER, 'APPLIED', ''],
  ]);

  await page.getByLabel('Outcome').selectOption('REFUSED');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await expect(page).toHaveURL(/outcome=REFUSED/);
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toContainText('USER_EXISTS');

  // A filter that matches nothing says so.
  await page.getByLabel('Actor').fill('nobody-at-all');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await expect(table).toContainText('No audit events match these filters.');
  await expect(page.getByTestId('audit-count')).toContainText('0 events match');

  // The user directory is the admins': a viewer asking for the same
  // events finds none, on the page, from the API or in the CSV.
  await page.context().clearCookies();
  await signIn(page, 'viewer');
  await page.goto(`/audit?targetKind=user&targetId=${NEW_USER}`);
  await expect(table).toContainText('No audit events match these filters.');
  await expect(page.getByTestId('audit-count')).toContainText('0 events match');
  await expect(page.getByText('Events about users and sign-in are shown to admins only.')).toBeVisible();
  await expect(page.getByLabel('Target kind')).toHaveAttribute('placeholder', 'e.g. settlement');
  const asked = await page.request.get(`/api/audit?targetKind=user&targetId=${NEW_USER}`);
  expect(asked.status()).toBe(200);
  expect(await asked.json()).toMatchObject({ rows: [], count: { value: 0, capped: false } });
  const newest = (await (await page.request.get('/api/audit')).json()) as {
    rows: { action: string; targetKind: string }[];
  };
  expect(
    newest.rows.filter(
      (r) => ['user', 'sso_subject', 'sso_provider'].includes(r.targetKind) || r.action.startsWith('auth.'),
    ),
  ).toEqual([]);
  const viewerCsv = await (await page.request.get('/api/audit/export?targetKind=user')).text();
  expect(viewerCsv.trimEnd().split('\r\n')).toHaveLength(1);
});

for (const theme of ['light', 'dark'] as const) {
  test(`the audit and users pages have no serious accessibility violations in ${theme} mode`, async ({ page }) => {
    await signIn(page, 'admin');
    for (const path of ['audit', 'users'] as const) {
      await gotoInTheme(page, `/${path}`, theme);
      await expect(page.getByRole('table', { name: path === 'audit' ? 'Audit events' : 'Users' })).toBeVisible();
      await expectNoSeriousViolations(page);
      await captureScreenshot(page, `${path}-${theme}`);
    }
    // The refusal page a non-admin sees is held to the same bar.
    await page.context().clearCookies();
    await signIn(page, 'viewer');
    await gotoInTheme(page, '/users', theme);
    await expect(page.getByRole('heading', { name: 'Admins only' })).toBeVisible();
    await expectNoSeriousViolations(page);
  });
}
