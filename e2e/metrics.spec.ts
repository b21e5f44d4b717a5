import { expect, test } from '@playwright/test';
import {
  countsFromDatabase,
  countsFromLastSample,
  forbiddenLabelValues,
  scrapeViolations,
} from '../test/support/metric-truth';
import { byLabel, parsePrometheus } from '../test/support/prometheus';
import { E2E_METRICS_TOKEN } from './support/server';
import { e2eDatabase } from './support/database';
import { signIn } from './support/session';

// The e2e server runs with the default KEEL_STALE_THRESHOLD_MS.
const STALE_THRESHOLD_MS = 900_000;

test('/api/metrics needs a session or the scraper token', async ({ request }) => {
  const response = await request.get('/api/metrics');
  expect(response.status()).toBe(401);
  expect(await response.text()).not.toContain('keel_');
  const wrong = await request.get('/api/metrics', {
    headers: { authorization: 'Bearer not-the-token-not-the-token-not-the' },
  });
  expect(wrong.status()).toBe(401);
  expect(await wrong.text()).not.toContain('keel_');
  const scraper = await request.get('/api/metrics', { headers: { authorization: `Bearer ${E2E_METRICS_TOKEN}` } });
  expect(scraper.status()).toBe(200);
  expect(await scraper.text()).toContain('keel_settlement_queue_depth');
});

test('a scrape reports the database counts, action outcomes and API latency, and no ids', async ({ page }) => {
  await signIn(page, 'admin');
  // One refused action and one read, so the process counters have something to show.
  await page.goto('/users');
  await page.getByLabel('Username', { exact: true }).fill('admin');
  await page.getByLabel('Name', { exact: true }).fill('Second Admin');
  await page.getByLabel('Initial password').fill('some-password');
  await page.getByRole('button', { name: 'Create user…' }).click();
  await page.getByRole('alertdialog').getByRole('button', { name: 'Create user' }).click();
  await expect(page.getByTestId('toast').first()).toContainText('Refused: USER_EXISTS');
  expect((await page.request.get('/api/audit?outcome=REFUSED')).status()).toBe(200);

  const db = await e2eDatabase();
  try {
    // The gauges are the sampler's last figures (taken every 15 s, at once when older than 30 s), so the
    // scrape must equal the last sample taken before it or, when it took one itself, after it.
    const before = await countsFromLastSample(db);
    const response = await page.request.get('/api/metrics');
    const after = await countsFromLastSample(db);
    expect(response.status()).toBe(200);
    expect(response.headers()['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const body = await response.text();
    const samples = parsePrometheus(body);
    const reported = {
      queue: byLabel(samples, 'keel_settlement_queue_depth', 'state'),
      deadLetters: byLabel(samples, 'keel_settlement_dead_letters', 'reason'),
      executions: byLabel(samples, 'keel_batch_executions', 'status'),
      stale: byLabel(samples, 'keel_batch_stale_executions')['']!,
      pendingProposals: byLabel(samples, 'keel_recovery_pending_proposals')['']!,
    };
    expect(scrapeViolations(reported, before, after)).toEqual([]);
    // And the sample is the database's: nothing writes dead letters or executions in this run.
    const database = await countsFromDatabase(db, STALE_THRESHOLD_MS);
    const nonzero = (m: Record<string, number>) =>
      Object.fromEntries(
        Object.entries(m)
          .filter(([, n]) => n > 0)
          .sort(),
      );
    expect(nonzero(reported.deadLetters)).toEqual(nonzero(database.deadLetters));
    expect(nonzero(reported.executions)).toEqual(nonzero(database.executions));
    // The whole queue does not move with the clock: it equals the database's (earlier specs replay
    // dead letters into it, so it is not the seed's 5,000), and the demo data is there at all.
    const total = (m: Record<string, number>) => Object.values(m).reduce((x, y) => x + y, 0);
    expect(total(reported.queue)).toBe(total(database.queue));
    expect(total(reported.executions)).toBeGreaterThan(0);
    expect(total(reported.deadLetters)).toBeGreaterThan(0);

    const refused = samples.find(
      (s) =>
        s.name === 'keel_action_outcomes_total' &&
        s.labels.action === 'user.create' &&
        s.labels.outcome === 'REFUSED' &&
        s.labels.code === 'USER_EXISTS',
    );
    expect(refused?.value).toBeGreaterThanOrEqual(1);
    const reads = samples.find(
      (s) =>
        s.name === 'keel_api_request_duration_seconds_count' &&
        s.labels.route === '/api/audit' &&
        s.labels.method === 'GET' &&
        s.labels.status === '200',
    );
    expect(reads?.value).toBeGreaterThanOrEqual(1);

    const forbidden = await forbiddenLabelValues(db);
    expect(forbidden.length).toBeGreaterThan(5000);
    const labelValues = new Set(samples.flatMap((s) => Object.values(s.labels)));
    expect(forbidden.filter((v) => labelValues.has(v))).toEqual([]);
    expect(forbidden.filter((v) => v.length >= 8 && body.includes(v))).toEqual([]);
  } finally {
    await db.end();
  }
});
