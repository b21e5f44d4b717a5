import { beforeAll, describe, expect, it } from 'vitest';
import { parseSettings, type Settings } from '../../lib/config/settings';
import { seedDemo } from '../../lib/demo/seed';
import { BATCH_STATUSES } from '../../lib/domain/batch-status';
import { recordActionOutcome, recordApiRequest, routePattern } from '../../lib/observability/metrics';
import { renderMetrics } from '../../lib/server/metrics-scrape';
import { freshDatabase, type TestDatabase } from '../support/database';
import { countsFromDatabase, forbiddenLabelValues, scrapeViolations } from '../support/metric-truth';
import { byLabel, parsePrometheus } from '../support/prometheus';

const ALLOWED_LABELS = new Set([
  'state',
  'reason',
  'status',
  'action',
  'outcome',
  'code',
  'route',
  'method',
  'le',
  'quantile',
  'type',
  'space',
  'version',
  'major',
  'minor',
  'patch',
  'kind',
]);

function settings(): Settings {
  const parsed = parseSettings({
    DATABASE_URL: 'postgres://unused',
    KEEL_CHECKPOINT_KEY: 'ab'.repeat(32),
    KEEL_DEMO: '1',
  });
  if (!parsed.ok) throw new Error('settings');
  return parsed.value;
}

describe('/api/metrics exposition', () => {
  let database: TestDatabase;
  const threshold = settings().staleThresholdMs;

  beforeAll(async () => {
    database = await freshDatabase();
    expect(await seedDemo(database.db, settings())).toBe(true);
    await database.pool.query(`
      insert into keel.recovery_proposal (target_kind, target_id, evidence_digest, evidence, expected_version,
      proposer_id, proposer_login, wait_owner, wait_deadline, wait_cancellation_id)
      values ('batch', '1', decode(repeat('ab', 32), 'hex'),
      '{}', 1, 'u1', 'operator', 'p', now() + interval '15 minutes', 'c1'),
             ('batch', '2', decode(repeat('cd', 32), 'hex'),
             '{}', 1, 'u1', 'operator', 'p', now() + interval '15 minutes', 'c2')`);
  }, 180_000);

  it('reports gauges equal to counts queried from the database at scrape time', async () => {
    const before = await countsFromDatabase(database.pool, threshold);
    const { body, contentType } = await renderMetrics(database.db, threshold);
    const after = await countsFromDatabase(database.pool, threshold);
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    const samples = parsePrometheus(body);
    const reported = {
      queue: byLabel(samples, 'keel_settlement_queue_depth', 'state'),
      deadLetters: byLabel(samples, 'keel_settlement_dead_letters', 'reason'),
      executions: byLabel(samples, 'keel_batch_executions', 'status'),
      stale: byLabel(samples, 'keel_batch_stale_executions')['']!,
      pendingProposals: byLabel(samples, 'keel_recovery_pending_proposals')['']!,
    };
    expect(scrapeViolations(reported, before, after)).toEqual([]);
    // Every status is reported, zero or not, so a dashboard never loses a series.
    expect(Object.keys(reported.executions).sort()).toEqual([...BATCH_STATUSES].sort());
    // The demo data has something in every gauge, so a gauge stuck at zero would fail.
    expect(Object.keys(reported.queue).sort()).toEqual(['due', 'leased', 'retry_scheduled']);
    expect(Object.values(reported.queue).every((n) => n > 0)).toBe(true);
    expect(reported.stale).toBeGreaterThan(0);
    expect(reported.pendingProposals).toBe(2);
    expect(Object.values(reported.deadLetters).reduce((a, b) => a + b, 0)).toBe(300);
  });

  it('reports the alerting gauges: the next approval deadline and the age of the oldest due settlement', async () => {
    const truth = await database.pool.query(`
      select extract(epoch from (select min(wait_deadline) from keel.recovery_proposal
      where status = 'PENDING') - clock_timestamp())::float8 as deadline,
             ((extract(epoch from clock_timestamp()) * 1000)::bigint - (select min(next_visible_at_ms)
             from settle.attempts
               where next_visible_at_ms <= (extract(epoch from clock_timestamp()) * 1000)::bigint
                 and (lease_owner is null or lease_until_ms <= (extract(epoch from clock_timestamp())
                 * 1000)::bigint)))::float8 / 1000 as oldest`);
    const samples = parsePrometheus((await renderMetrics(database.db, threshold)).body);
    const deadline = byLabel(samples, 'keel_recovery_next_deadline_seconds')['']!;
    const oldest = byLabel(samples, 'keel_settlement_oldest_due_seconds')['']!;
    // Two proposals wait 15 minutes from seeding; the scrape follows the truth query within seconds.
    expect(deadline).toBeGreaterThan(0);
    expect(deadline).toBeLessThanOrEqual(15 * 60);
    expect(Math.abs(deadline - truth.rows[0].deadline)).toBeLessThan(30);
    expect(oldest).toBeGreaterThan(0);
    expect(Math.abs(oldest - truth.rows[0].oldest)).toBeLessThan(30);
    expect(samples.some((s) => s.name === 'keel_live_events_failures_total')).toBe(true);
  });

  it('counts action outcomes and API latency by name, code and route pattern, never by id', async () => {
    recordActionOutcome('user.create', 'REFUSED', 'USER_EXISTS', 0.02);
    recordActionOutcome('user.create', 'REFUSED', 'USER_EXISTS', 0.03);
    recordActionOutcome('user.create', 'APPLIED', null, 0.05);
    const [receipt] = await forbiddenLabelValues(database.pool);
    // A code or action that is not a plain name (here, one carrying a receipt id) is folded into "other".
    recordActionOutcome(`replay ${receipt}`, 'REFUSED', `NOT_FOUND ${receipt}`, 0.01);
    recordApiRequest(routePattern(`/api/settlements/receipts/${receipt}`, { receiptId: receipt! }), 'GET', 200, 0.004);
    const samples = parsePrometheus((await renderMetrics(database.db, threshold)).body);
    const outcomes = samples.filter((s) => s.name === 'keel_action_outcomes_total');
    expect(outcomes.find((s) => s.labels.action === 'user.create' && s.labels.code === 'USER_EXISTS')?.value).toBe(2);
    expect(outcomes.find((s) => s.labels.action === 'user.create' && s.labels.outcome === 'APPLIED')).toMatchObject({
      labels: { code: '' },
      value: 1,
    });
    expect(outcomes.find((s) => s.labels.action === 'other')).toMatchObject({
      labels: { code: 'OTHER', outcome: 'REFUSED' },
      value: 1,
    });
    const latency = samples.find((s) => s.name === 'keel_api_request_duration_seconds_count');
    expect(latency?.labels).toEqual({ route: '/api/settlements/receipts/[receiptId]', method: 'GET', status: '200' });
    expect(
      samples.find(
        (s) =>
          s.name === 'keel_action_duration_seconds_count' &&
          s.labels.action === 'user.create' &&
          s.labels.outcome === 'REFUSED',
      )?.value,
    ).toBe(2);
  });

  it('never uses a receipt id, owner or lease token, or retry key as a label', async () => {
    const body = (await renderMetrics(database.db, threshold)).body;
    const samples = parsePrometheus(body);
    const forbidden = await forbiddenLabelValues(database.pool);
    expect(forbidden.length).toBeGreaterThan(5_000);
    const labelValues = new Set(samples.flatMap((s) => Object.values(s.labels)));
    expect(forbidden.filter((v) => labelValues.has(v))).toEqual([]);
    expect(forbidden.filter((v) => v.length >= 8 && body.includes(v))).toEqual([]);
    const labelNames = new Set(samples.flatMap((s) => Object.keys(s.labels)));
    expect([...labelNames].filter((n) => !ALLOWED_LABELS.has(n))).toEqual([]);
  });
});
