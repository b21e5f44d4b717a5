import { expect, test } from '@playwright/test';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from '../lib/db/embedded';
import { e2eDatabase, e2eDatabaseUrl } from './support/database';
import {
  startPrometheus,
  until,
  type ActiveAlert,
  type PrometheusServer,
  type ScrapeJob,
} from './support/prometheus-server';
import { startKeelInstance, type KeelInstance } from './support/replica-cluster';
import { E2E_METRICS_TOKEN } from './support/server';

/**
 * docs/alerts.yml in a real Prometheus, scraping a real Keel with the scraper token: each
 * alert is driven to pending by its real condition (rows a worker, a person or a failure
 * would leave, a lock a hung worker would hold, a dropped connection, a stopped server),
 * one after another, and at every poll no alert is active whose condition does not hold.
 * Keel runs on a database of its own in the e2e cluster, without demo data, so nothing
 * holds at the start; it serves the build the e2e server made.
 */

test.describe.configure({ mode: 'serial' });

const RULES = 'docs/alerts.yml';
const ALERTS = [...readFileSync(RULES, 'utf8').matchAll(/^\s+- alert: (\w+)$/gm)].map((m) => m[1]!);
// The metric sampler's advisory lock (lib/workers/metric-sampler.ts): held, no sample can be taken.
const SAMPLER_LOCK_KEY = '0x6b65656c01';
const DEAD_LETTER_THRESHOLD = 5;
const PASSWORD = 'alerts-password-1';
const run = Date.now().toString(36);
const databaseName = `keel_alerts_${run}`;

let keel: KeelInstance;
let prometheus: PrometheusServer;
let db: pg.Client;
let scrapeJob: ScrapeJob;
const held: pg.Client[] = [];

const sql = async <T extends pg.QueryResultRow = Record<string, unknown>>(text: string, params: unknown[] = []) =>
  (await db.query<T>(text, params)).rows;
const nowMs = `(extract(epoch from clock_timestamp()) * 1000)::bigint`;

/** A connection of its own, for a lock held across steps the way a hung worker would hold it. */
async function holder(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: e2eDatabaseUrl(databaseName) });
  await client.connect();
  held.push(client);
  return client;
}

test.beforeAll(async () => {
  test.setTimeout(240_000);
  const admin = await e2eDatabase('postgres');
  try {
    await admin.query(`create database ${databaseName}`);
  } finally {
    await admin.end();
  }
  const env = {
    DATABASE_URL: e2eDatabaseUrl(databaseName),
    KEEL_CHECKPOINT_KEY: `${'a1e27'.repeat(12)}a1e2`,
    KEEL_DEMO: '0',
    KEEL_DEMO_RUNTIME: '0',
    KEEL_METRICS_TOKEN: E2E_METRICS_TOKEN,
    // Deliveries go to a port where nothing listens: each attempt fails at once.
    KEEL_WEBHOOK_URLS: `alerts=http://127.0.0.1:${await freePort()}/hook`,
    KEEL_WEBHOOK_SECRET_ALERTS: 'alerts-webhook-secret-0123456789abcdef',
    KEEL_DEAD_LETTER_ALERT_THRESHOLD: String(DEAD_LETTER_THRESHOLD),
  };
  // The CLI migrates the empty database and makes the user the live-update page signs in as.
  await promisify(execFile)(
    process.execPath,
    [
      '--import',
      'tsx',
      '--conditions=react-server',
      'bin/keel.ts',
      'create-user',
      '--username',
      'alerts',
      '--role',
      'viewer',
    ],
    {
      env: { ...process.env, ...env, KEEL_NEW_USER_PASSWORD: PASSWORD },
    },
  );
  keel = await startKeelInstance('keel-alerts', env);
  db = new pg.Client({ connectionString: e2eDatabaseUrl(databaseName) });
  await db.connect();
  scrapeJob = { job: 'keel', targets: [`127.0.0.1:${keel.port}`], metricsToken: E2E_METRICS_TOKEN };
  prometheus = await startPrometheus({ rules: RULES, job: scrapeJob });
});

test.afterAll(async () => {
  await Promise.all(held.map((client) => client.end().catch(() => {})));
  await db?.end();
  await prometheus?.stop();
  await keel?.stop();
  const admin = await e2eDatabase('postgres');
  try {
    await admin.query(`drop database if exists ${databaseName} with (force)`);
  } finally {
    await admin.end();
  }
});

const activeNames = (alerts: ActiveAlert[]) => [...new Set(alerts.map((a) => a.labels.alertname))].sort();
const reachedPending = new Set<string>();

/**
 * Polls Prometheus until exactly `active` are pending or firing. Fails at once when an
 * alert outside `active` and `passing` (alerts whose condition is just ending) is active.
 */
async function expectAlerts(active: string[], passing: string[] = [], timeoutMs = 45_000): Promise<void> {
  const wanted = JSON.stringify([...active].sort());
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const alerts = await prometheus.alerts();
    for (const alert of alerts) if (alert.state === 'pending') reachedPending.add(alert.labels.alertname);
    const names = activeNames(alerts);
    const unexpected = names.filter((name) => !active.includes(name) && !passing.includes(name));
    if (unexpected.length > 0)
      throw new Error(`active without their condition: ${unexpected.join(', ')}\n${JSON.stringify(alerts, null, 1)}`);
    if (JSON.stringify(names) === wanted) return;
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for exactly ${wanted}; active: ${JSON.stringify(names)}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function insertProposal(targetId: string, deadline: string): Promise<void> {
  await sql(
    `insert into keel.recovery_proposal (target_kind, target_id, evidence_digest, evidence, expected_version,
     proposer_id, proposer_login, wait_owner, wait_deadline, wait_cancellation_id)
     values ('batch', $1::text, sha256(convert_to($1::text, 'UTF8')), '{}', 1, 'u-operator', 'operator', 'proposal',
     clock_timestamp() + $2::interval, $1::text)`,
    [targetId, deadline],
  );
}

test('each alert of docs/alerts.yml reaches pending by its real condition, and none without one', async ({ page }) => {
  test.setTimeout(420_000);
  const on: string[] = [];
  const turnOn = async (alert: string, passing: string[] = [], timeoutMs?: number) => {
    on.push(alert);
    await expectAlerts(on, passing, timeoutMs);
  };

  await test.step('the live-update listener runs for a signed-in page', async () => {
    await page.goto(`${keel.url}/sign-in`);
    await page.getByLabel('Username').fill('alerts');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await expect(page.getByTestId('signed-in-user')).toContainText('alerts');
    await until(
      'the LISTEN connection',
      () =>
        sql(`select pid from pg_stat_activity where application_name = 'keel-live' and datname = $1`, [databaseName]),
      (rows) => rows.length === 1,
    );
  });

  await test.step('nothing holds on an empty database: no alert, and no deadline series at all', async () => {
    const scraped = await until(
      'a successful scrape with the sampled figures',
      () => prometheus.query('up{job="keel"} == 1 and on () count(keel_settlement_dead_lettered_total) > 0'),
      (r) => r.length === 1,
    );
    expect(scraped).toHaveLength(1);
    const since = Date.now();
    // Rules evaluated after that scrape; KeelNotScraped may have been pending before it.
    await until(
      'a rule evaluation after the first scrape',
      () => prometheus.lastEvaluation(),
      (at) => at > since + 1_000,
    );
    await expectAlerts([], ['KeelNotScraped']);
    // No proposal is pending: the series is absent (it used to be scraped as 0, which paged at once).
    expect(await prometheus.query('keel_recovery_next_deadline_seconds')).toEqual([]);
    expect(await prometheus.query('keel_settlement_oldest_due_seconds')).toMatchObject([
      { value: [expect.any(Number), '0'] },
    ]);
    expect(await prometheus.query('keel_dead_letter_alert_threshold')).toMatchObject([
      { value: [expect.any(Number), String(DEAD_LETTER_THRESHOLD)] },
    ]);
    await expectAlerts([]);
    reachedPending.clear();
  });

  await test.step('a webhook delivery fails (nothing listens at its endpoint)', async () => {
    await insertProposal(`alerts-far-1-${run}`, '1 hour');
    await turnOn('KeelWebhookDeliveriesFailing');
  });

  await test.step('the delivery fails its last attempt and is given up', async () => {
    // Not while a worker holds it mid-send: its outcome would be refused and the lease waited out.
    await until(
      'the delivery at its last attempt',
      async () =>
        (
          await db.query(`update keel.webhook_delivery set attempts = 11, next_attempt_at = clock_timestamp()
                                   where status = 'PENDING' and attempts between 1 and 10 and (lease_until is null
                                   or lease_until < clock_timestamp())`)
        ).rowCount,
      (count) => count === 1,
    );
    on.splice(on.indexOf('KeelWebhookDeliveriesFailing'), 1);
    await turnOn('KeelWebhookDeliveriesGivenUp', ['KeelWebhookDeliveriesFailing']);
    expect(await sql(`select status, attempts from keel.webhook_delivery`)).toEqual([
      { status: 'FAILED', attempts: 12 },
    ]);
    // Every later event's delivery fails too: the failing alert stays on from here.
    await insertProposal(`alerts-far-2-${run}`, '1 hour');
    await turnOn('KeelWebhookDeliveriesFailing');
  });

  await test.step('dead letters of one reason arrive faster than KEEL_DEAD_LETTER_ALERT_THRESHOLD', async () => {
    // What the settlement store writes when it dead-letters: the dead letter and its history event, at once.
    await sql(`
      with r as (select 'alerts-dl-' || g as id, ${nowMs} as at
      from generate_series(1, ${DEAD_LETTER_THRESHOLD + 3}) g),
      history as (insert into keel.settlement_event (receipt_id, kind, attempt, reason_code, at_ms)
      select id, 'dead_lettered', 6, 'rpc', at from r)
      insert into settle.dead_letters (receipt_id, finalized_at, attempts, reason, canonical_json, recorded_at_ms)
      select id, 1, 6, 'rpc', '{}', at from r`);
    await turnOn('KeelDeadLettersGrowing');
    const growing = (await prometheus.alerts()).find((a) => a.labels.alertname === 'KeelDeadLettersGrowing');
    expect(growing?.labels.reason).toBe('rpc');
  });

  let executionId = 0;
  await test.step('an execution stops updating for longer than the stale threshold', async () => {
    const [definition] = await sql<{
      id: string;
    }>(`insert into oxide_batch.ob_job_definition (job_name, definition_revision, manifest_format, manifest_digest,
        manifest)
      values ('alerts-job', 'r1', 1, sha256('alerts-manifest'), '{}') returning id`);
    const [instance] = await sql<{ id: string }>(
      `insert into oxide_batch.ob_job_instance (job_name, instance_key) values ('alerts-job', sha256('alerts-instance'))
       returning id`,
    );
    const [execution] = await sql<{ id: string }>(
      `insert into oxide_batch.ob_job_execution (job_instance_id, definition_id, attempt, status, started_at,
       updated_at, version)
       values ($1, $2, 1, 'STARTED', clock_timestamp() - interval '3 hours', clock_timestamp() - interval '2 hours', 1)
       returning id`,
      [instance!.id, definition!.id],
    );
    executionId = Number(execution!.id);
    await turnOn('KeelStaleExecutions');
  });

  await test.step('a fault-state envelope fails validation', async () => {
    // Entries none, checkpoint not zero, and the empty envelope's checksum: corrupt three ways.
    await sql(
      `insert into oxide_batch.ob_step_execution (job_execution_id, step_name, step_logical_id, status, started_at,
       fault_state_payload)
       values ($1, 'load', 'load', 'STARTED', clock_timestamp() - interval '3 hours', $2)`,
      [executionId, JSON.stringify({ checkpoint: '1'.repeat(64), entries: [] })],
    );
    await turnOn('KeelCorruptEnvelopes');
  });

  const samplerStuckAt = Date.now();
  await test.step('no sample can be taken (a sampler hung holding its lock)', async () => {
    const lock = await holder();
    await lock.query(`select pg_advisory_lock(${SAMPLER_LOCK_KEY}::bigint)`);
    // The sampled figures stay as they were: the alerts on them stay on, KeelMetricsStale comes in a minute.
    await expectAlerts(on);
  });

  await test.step('a proposal nears its deadline with no approver', async () => {
    // Under the alert's 5 minutes, with room for the rest of the test before it expires.
    await insertProposal(`alerts-near-${run}`, '280 seconds');
    await turnOn('KeelProposalNearDeadline');
  });

  await test.step('settlements fall due and nobody claims them', async () => {
    await sql(`insert into settle.attempts (receipt_id, finalized_at, work_kind, attempts, next_visible_at_ms,
               row_version, updated_at_ms)
               values ('alerts-due-1', 1, 'pending_observation', 0, ${nowMs} - 600000, 0, ${nowMs} - 600000)`);
    await turnOn('KeelSettlementQueueStalled');
  });

  await test.step('a bulk job runs and its worker hangs mid-batch', async () => {
    await sql(`insert into keel."user" (id, name, email, username, display_username, role, banned)
               values ('u-bulk-starter', 'Bulk Starter', 'bulk-starter@users.keel.invalid', 'bulk-starter',
               'bulk-starter', 'operator', false)`);
    // The worker takes the job, then waits on its starter's row: its lease on the job never commits.
    const lock = await holder();
    await lock.query('begin');
    await lock.query(`select 1 from keel."user" where id = 'u-bulk-starter' for update`);
    await sql(`insert into keel.bulk_replay (created_by_id, created_by_login, note,
               filter, item_count, status, started_at, started_by_id,
                 started_by_login, started_by_role)
               values ('u-bulk-starter', 'bulk-starter', 'alerts', '{}', 0, 'RUNNING', clock_timestamp(),
               'u-bulk-starter', 'bulk-starter', 'operator')`);
    await turnOn('KeelBulkJobStalled');
    expect(await sql(`select status from keel.bulk_replay`)).toEqual([{ status: 'RUNNING' }]);
  });

  await test.step('an orchestration lease lapses', async () => {
    await sql(`insert into keel.durable_checkpoint (execution_id, checkpoint, authentication_tag, lease_owner,
               fencing_token, lease_expires_at_ms)
               values ('alerts-orchestration', '{}', 'tag', 'orchestrator-1', 1, ${nowMs} - 60000)`);
    await turnOn('KeelOrchestrationLeasesLapsed');
  });

  await test.step('the live-update listener loses its connection four times', async () => {
    for (let loss = 0; loss < 4; loss += 1) {
      const [listener] = await until(
        'the LISTEN connection',
        () =>
          sql<{ pid: number }>(
            `select pid from pg_stat_activity where application_name = 'keel-live' and datname = $1`,
            [databaseName],
          ),
        (rows) => rows.length === 1,
      );
      await sql('select pg_terminate_backend($1)', [listener!.pid]);
      await until(
        'a new LISTEN connection',
        () =>
          sql<{ pid: number }>(
            `select pid from pg_stat_activity where application_name = 'keel-live' and datname = $1`,
            [databaseName],
          ),
        (rows) => rows.length === 1 && rows[0]!.pid !== listener!.pid,
      );
    }
    await turnOn('KeelLiveUpdatesFailing');
  });

  await test.step('a second Keel instance stops answering', async () => {
    await prometheus.reconfigure({ ...scrapeJob, targets: [...scrapeJob.targets, `127.0.0.1:${await freePort()}`] });
    await turnOn('KeelInstanceDown');
  });

  await test.step('the sampled figures grow older than a minute', async () => {
    await turnOn('KeelMetricsStale', [], 90_000);
    expect(Date.now() - samplerStuckAt).toBeGreaterThan(45_000);
    // The dead_letters.rising webhook (checked every minute) saw the same rise as the alert.
    await until(
      'the dead_letters.rising event',
      () => sql(`select 1 from keel.webhook_event where kind = 'dead_letters.rising' and subject = 'dead_letters:rpc'`),
      (rows) => rows.length === 1,
      75_000,
    );
  });

  await test.step('no Keel instance answers', async () => {
    for (const client of held.splice(0)) await client.end();
    await keel.stop();
    // Its figures are gone with it: every alert on them ends, and the page for the whole service comes.
    await expectAlerts(['KeelDown'], on, 60_000);
  });

  await test.step('Prometheus has no Keel target at all (service discovery lost them)', async () => {
    await prometheus.reconfigure({ ...scrapeJob, targets: [] });
    await expectAlerts(['KeelNotScraped'], ['KeelDown'], 60_000);
  });

  expect([...reachedPending].sort()).toEqual([...ALERTS].sort());
});
