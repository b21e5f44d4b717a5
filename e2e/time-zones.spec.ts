import { readFile } from 'node:fs/promises';
import { expect, test, type Page } from '@playwright/test';
import { expectNoSeriousViolations, useTheme } from './support/axe';
import { e2eDatabase } from './support/database';
import { signIn, toast } from './support/session';
import { captureScreenshot } from './support/screenshots';

// The browser runs in New York, so "this browser's zone" is neither UTC nor the zone chosen by name.
test.use({ viewport: { width: 1440, height: 900 }, timezoneId: 'America/New_York' });
test.describe.configure({ mode: 'serial' });

const USER = 'approver2';
const TARGET = `tz-e2e-${Date.now()}`;
const AUDIT = `/audit?targetKind=settlement&targetId=${TARGET}`;

test.beforeAll(async () => {
  const db = await e2eDatabase();
  try {
    // Two events an hour apart, in winter (Berlin is UTC+01:00): a filter read in the wrong zone finds the other one.
    await db.query(
      `insert into keel.audit_event (at, actor_login, actor_role, action, target_kind, target_id, reason, outcome)
       select at::timestamptz, 'support', 'support', 'settlement.replay', 'settlement', $1, reason, 'APPLIED'
         from (values ('2026-01-15T09:30:00.123456Z', 'early'), ('2026-01-15T10:30:00Z', 'late')) as e (at, reason)`,
      [TARGET],
    );
  } finally {
    await db.end();
  }
});

// The other specs see this user's times in UTC, as every demo user's.
test.afterAll(async () => {
  const db = await e2eDatabase();
  try {
    await db.query(`update keel."user" set time_zone = 'utc' where username = $1`, [USER]);
  } finally {
    await db.end();
  }
});

const auditTable = (page: Page) => page.getByRole('table', { name: 'Audit events' });
const rows = (page: Page) => auditTable(page).locator('tbody tr[data-audit-id]');

async function storedZone(): Promise<{ zone: string; events: { before: unknown; after: unknown }[] }> {
  const db = await e2eDatabase();
  try {
    const zone = await db.query(`select time_zone from keel."user" where username = $1`, [USER]);
    const events = await db.query(
      `select before, after from keel.audit_event where action = 'user.time_zone' and actor_login = $1
        and outcome = 'APPLIED' order by id`,
      [USER],
    );
    return { zone: zone.rows[0].time_zone, events: events.rows };
  } finally {
    await db.end();
  }
}

async function chooseZone(page: Page, choice: RegExp, name?: string) {
  await page.getByRole('link', { name: /^Times in / }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Preferences' })).toBeVisible();
  await page.getByRole('radio', { name: choice }).check();
  if (name !== undefined) await page.getByLabel(/^Zone name/).fill(name);
  await page.getByRole('button', { name: 'Save time zone' }).click();
}

test('a time zone change reflected in a table, a date filter and the CSV', async ({ page, browser }) => {
  await signIn(page, USER);
  await page.goto(AUDIT);
  await expect(rows(page)).toHaveCount(2);
  await expect(auditTable(page).getByRole('columnheader').first()).toHaveText('Time (UTC)');
  await expect(rows(page).nth(1).getByRole('cell').first()).toContainText('2026-01-15 09:30:00');
  await expect(page.getByLabel('From (UTC)')).toBeVisible();

  // A zone that does not exist is refused beside its field, and nothing is saved.
  await chooseZone(page, /^A zone of my choice/, 'Mars/Olympus');
  await expect(page.getByRole('alert').filter({ hasText: 'zone name such as Europe/Berlin' })).toBeVisible();
  expect((await storedZone()).zone).toBe('utc');

  // Europe/Berlin by name: stored on the server and audited.
  await page.getByLabel(/^Zone name/).fill('Europe/Berlin');
  await page.getByRole('button', { name: 'Save time zone' }).click();
  await expect(toast(page)).toContainText('Times are now shown in Europe/Berlin');
  await expect(page.getByRole('link', { name: 'Times in Europe/Berlin' })).toBeVisible();
  expect(await storedZone()).toEqual({
    zone: 'Europe/Berlin',
    events: [{ before: { timeZone: 'utc' }, after: { timeZone: 'Europe/Berlin' } }],
  });

  // The table: the heading names the zone once, the cells are Berlin's wall clock.
  await page.goto(AUDIT);
  await expect(auditTable(page).getByRole('columnheader').first()).toHaveText(/^Time \(UTC\+0[12]:00\)$/);
  await expect(rows(page).nth(1).getByRole('cell').first()).toContainText('2026-01-15 10:30:00');
  await expect(rows(page).nth(0).getByRole('cell').first()).toContainText('2026-01-15 11:30:00');

  // The date filter reads Berlin's wall clock; the address keeps the instant in UTC.
  await page.getByLabel('From (Europe/Berlin)').fill('2026-01-15T10:00');
  await page.getByLabel('Before (Europe/Berlin)').fill('2026-01-15T11:00');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await expect(rows(page)).toHaveCount(1);
  await expect(rows(page).first()).toContainText('early');
  const filtered = new URL(page.url());
  expect(filtered.searchParams.get('from')).toBe('2026-01-15T09:00:00.000Z');
  expect(filtered.searchParams.get('to')).toBe('2026-01-15T10:00:00.000Z');
  await page.reload();
  await expect(page.getByLabel('From (Europe/Berlin)')).toHaveValue('2026-01-15T10:00');
  await expectNoSeriousViolations(page);
  await captureScreenshot(page, 'audit-time-zone-light');

  // The CSV: the time column names the zone, each time carries its offset and the microseconds.
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('link', { name: 'Export CSV (filtered)' }).click(),
  ]);
  const lines = (await readFile((await download.path())!, 'utf8')).trimEnd().split('\r\n');
  expect(lines[0]).toMatch(/^id,at_Europe\/Berlin,actor,role,action,/);
  expect(lines).toHaveLength(2);
  expect(lines[1]!.split(',')[1]).toBe('2026-01-15T10:30:00.123456+01:00');

  // The same link shows the same event to someone who reads UTC, in their zone.
  const other = await browser.newContext({ timezoneId: 'Asia/Tokyo' });
  try {
    const viewer = await other.newPage();
    await signIn(viewer, 'viewer');
    await viewer.goto(filtered.pathname + filtered.search);
    await expect(rows(viewer)).toHaveCount(1);
    await expect(rows(viewer).first().getByRole('cell').first()).toContainText('2026-01-15 09:30:00');
    await expect(viewer.getByLabel('From (UTC)')).toHaveValue('2026-01-15T09:00');
  } finally {
    await other.close();
  }

  // This browser's zone (New York): rendered so by the server, from the cookie the browser wrote.
  await chooseZone(page, /^This browser’s zone/);
  await expect(toast(page)).toContainText('Times are now shown in this browser’s zone');
  await expect(page.getByRole('link', { name: 'Times in America/New_York' })).toBeVisible();
  const html = await (await page.context().request.get(AUDIT)).text();
  expect(html).toContain('Times in </span>America/New_York</a>');
  await page.goto(AUDIT);
  await expect(auditTable(page).getByRole('columnheader').first()).toHaveText(/^Time \(UTC-0[45]:00\)$/);
  await expect(rows(page).nth(1).getByRole('cell').first()).toContainText('2026-01-15 04:30:00');
  await expect(page.getByLabel('From (America/New_York)')).toBeVisible();
  expect((await storedZone()).zone).toBe('browser');
});

test('the Preferences page has no serious accessibility violations, light and dark', async ({ page }) => {
  await signIn(page, USER);
  await page.goto('/preferences');
  for (const theme of ['light', 'dark'] as const) {
    await useTheme(page, theme);
    await expect(page.getByRole('heading', { level: 1, name: 'Preferences' })).toBeVisible();
    await expect(page.getByText('Here: America/New_York.')).toBeVisible();
    await expectNoSeriousViolations(page);
  }
});
