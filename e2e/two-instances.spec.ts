import { expect, test, type Browser, type Page } from '@playwright/test';
import type pg from 'pg';
import {
  startKeelInstance,
  startReplicatedPostgres,
  type KeelInstance,
  type ReplicatedPostgres,
} from './support/replica-cluster';
import { DEMO_PASSWORD, toast } from './support/session';

/**
 * Two Keel instances behind one PostgreSQL primary, with a streaming standby made by
 * pg_basebackup that their list pages read from (docs/deployment.md): sessions, live
 * updates and the bulk job worker work across both, a user's own write is never hidden
 * by the replica's delay, and killing the instance that works a bulk job hands the job
 * to the other.
 */

test.describe.configure({ mode: 'serial' });

let cluster: ReplicatedPostgres;
let a: KeelInstance;
let b: KeelInstance;
let primary: pg.Client;
let standby: pg.Client;
const run = `${Date.now().toString(36)}`;

test.beforeAll(async () => {
  test.setTimeout(300_000);
  cluster = await startReplicatedPostgres();
  const env = {
    DATABASE_URL: cluster.primaryUrl,
    DATABASE_READ_URL: cluster.replicaUrl,
    // Replay is paused on purpose below: the replica stays in use however long that takes.
    KEEL_READ_MAX_LAG_MS: '600000',
    KEEL_WORKER_LEASE_MS: '2000',
    KEEL_CHECKPOINT_KEY: `${'c0ffee'.repeat(10)}c0ffee00`,
    KEEL_DEMO: '1',
    KEEL_DEMO_RUNTIME: '0',
    KEEL_SIGNIN_RATE_LIMIT: '1000',
  };
  // One after the other: the first migrates and seeds, the second finds both done.
  a = await startKeelInstance('keel-a', env);
  b = await startKeelInstance('keel-b', env);
  primary = await cluster.connect('primary');
  standby = await cluster.connect('replica');
});

test.afterAll(async () => {
  await Promise.all([primary?.end(), standby?.end()]);
  await Promise.all([a?.stop(), b?.stop()]);
  cluster?.stop();
});

async function signInAt(page: Page, instance: KeelInstance, username: string): Promise<void> {
  await page.goto(`${instance.url}/sign-in`);
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(DEMO_PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await expect(page.getByTestId('signed-in-user')).toContainText(username);
}

async function newPage(browser: Browser): Promise<Page> {
  const context = await browser.newContext();
  return context.newPage();
}

const health = async (instance: KeelInstance) =>
  (await (await fetch(`${instance.url}/api/health`)).json()) as { reads: { source: string; replica?: string } };

async function deadLetter(receiptId: string): Promise<void> {
  await primary.query(
    `insert into settle.dead_letters (receipt_id, finalized_at, attempts, reason, canonical_json, recorded_at_ms)
     values ($1, 1, 3, 'rpc', '{}', (extract(epoch from clock_timestamp()) * 1000)::bigint)`,
    [receiptId],
  );
}

/** The standby has replayed everything the primary has written so far. */
async function replicaCaughtUp(): Promise<void> {
  const { rows } = await primary.query(`select pg_current_wal_lsn()::text as lsn`);
  await expect
    .poll(
      async () =>
        (await standby.query(`select pg_last_wal_replay_lsn() >= $1::pg_lsn as ok`, [rows[0].lsn])).rows[0].ok,
    )
    .toBe(true);
}

const listed = async (page: Page, instance: KeelInstance, prefix: string) => {
  const response = await page.request.get(
    `${instance.url}/api/settlements/dead-letters?q=${encodeURIComponent(prefix)}`,
  );
  expect(response.status()).toBe(200);
  return ((await response.json()) as { rows: { receiptId: string }[] }).rows.map((r) => r.receiptId);
};

test('a session begun on one instance is honoured by the other', async ({ browser }) => {
  const page = await newPage(browser);
  await signInAt(page, a, 'viewer');
  await page.goto(`${b.url}/executions`);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('Executions');
  await expect(page.getByTestId('signed-in-user')).toContainText('viewer');
  // Signing out on B ends the session on A too: it lives in the shared database.
  await page.goto(`${b.url}/`);
  await page.getByRole('button', { name: /Sign out/ }).click();
  await expect(page).toHaveURL(`${b.url}/sign-in`);
  await page.goto(`${a.url}/executions`);
  await expect(page).toHaveURL(/\/sign-in/);
  await page.context().close();
});

test('lists read from the replica, but a user who has just written reads their write', async ({ browser }) => {
  await expect.poll(async () => (await health(a)).reads.source).toBe('replica');
  await expect.poll(async () => (await health(b)).reads.source).toBe('replica');
  const mine = `mi-mine-${run}`;
  const hidden = `mi-hidden-${run}`;
  await deadLetter(mine);
  await replicaCaughtUp();

  const support = await newPage(browser);
  const viewer = await newPage(browser);
  await signInAt(support, b, 'support');
  await signInAt(viewer, b, 'viewer');
  await standby.query('select pg_wal_replay_pause()');
  try {
    await deadLetter(hidden);
    // On the primary, not yet on the paused replica: both users' lists come from the replica.
    expect(await listed(viewer, b, hidden)).toEqual([]);
    expect(await listed(support, b, hidden)).toEqual([]);

    // Support replays a dead letter on B: the write lands on the primary.
    await support.goto(`${b.url}/settlements/dead-letters?q=${mine}`);
    await support.getByRole('button', { name: `Replay ${mine}` }).click();
    const dialog = support.getByRole('alertdialog');
    await dialog.getByLabel(/Note/).fill('ledger back after the outage');
    await dialog.getByRole('button', { name: 'Replay dead letter' }).click();
    await expect(toast(support)).toContainText(`Replayed ${mine}`);
    // Their list shows their own write: the replica has not replayed it, so it reads the primary.
    await expect(support.getByRole('table', { name: 'Dead letters' })).toContainText(
      'No dead letters match these filters.',
    );
    expect(await listed(support, b, hidden)).toEqual([hidden]);
    // Someone who wrote nothing still reads the replica, which has neither change yet.
    expect(await listed(viewer, b, mine)).toEqual([mine]);
    expect(await listed(viewer, b, hidden)).toEqual([]);
  } finally {
    await standby.query('select pg_wal_replay_resume()');
  }
  await replicaCaughtUp();
  expect(await listed(viewer, b, hidden)).toEqual([hidden]);
  expect(await listed(viewer, b, mine)).toEqual([]);
  await Promise.all([support.context().close(), viewer.context().close()]);
});

test('a replica that goes away sends lists to the primary until it is back', async ({ browser }) => {
  const viewer = await newPage(browser);
  await signInAt(viewer, a, 'viewer');
  const gone = `mi-gone-${run}`;
  await deadLetter(gone);
  await standby.end();
  cluster.stopReplica();
  try {
    // At once, before the instance's next check has noticed: the read falls over to the primary.
    expect(await listed(viewer, a, gone)).toEqual([gone]);
    await expect
      .poll(async () => (await health(a)).reads)
      .toEqual({ source: 'primary', replica: 'unreachable', lagMs: null });
    expect(await listed(viewer, a, gone)).toEqual([gone]);
    const metrics = await (await viewer.request.get(`${a.url}/api/metrics`)).text();
    expect(metrics).toMatch(/^keel_read_replica_usable 0$/m);
  } finally {
    cluster.startReplica();
    standby = await cluster.connect('replica');
  }
  await expect.poll(async () => (await health(a)).reads.source, { timeout: 30_000 }).toBe('replica');
  await replicaCaughtUp();
  const replicaReads = async () => {
    const metrics = await (await viewer.request.get(`${a.url}/api/metrics`)).text();
    expect(metrics).toMatch(/^keel_read_replica_usable 1$/m);
    return Number(/^keel_list_reads_total\{source="replica"\} (\d+)$/m.exec(metrics)?.[1] ?? 0);
  };
  // The page's own reads (its live stream and what it refetches) stop: only the list below is counted.
  await viewer.goto('about:blank');
  const before = await replicaReads();
  expect(await listed(viewer, a, gone)).toEqual([gone]);
  expect(await replicaReads()).toBe(before + 1);
  await viewer.context().close();
});

test('a replica cut off from its primary falls behind, though it has replayed all it received', async () => {
  const { rows } = await standby.query(`select current_setting('primary_conninfo') as conninfo`);
  const conninfo = rows[0].conninfo as string;
  await standby.query(`alter system set primary_conninfo = ''`);
  await standby.query('select pg_reload_conf()');
  try {
    // No WAL receiver any more; the primary goes on writing.
    await expect
      .poll(async () => (await standby.query(`select count(*)::int as n from pg_stat_wal_receiver`)).rows[0].n)
      .toBe(0);
    await deadLetter(`mi-cut-${run}`);
    await expect
      .poll(async () => ((await health(b)).reads as { lagMs?: number }).lagMs ?? 0, { timeout: 15_000 })
      .toBeGreaterThan(0);
  } finally {
    await standby.query(`alter system set primary_conninfo = $$${conninfo.replaceAll('$', '')}$$`);
    await standby.query('select pg_reload_conf()');
  }
  await replicaCaughtUp();
  await expect.poll(async () => (await health(b)).reads).toEqual({ source: 'replica', lagMs: 0 });
});

test('a change made through one instance updates the other instance’s open page', async ({ browser }) => {
  const live = `mi-live-${run}`;
  await deadLetter(live);
  await replicaCaughtUp();
  const watcher = await newPage(browser);
  await signInAt(watcher, b, 'viewer');
  await watcher.goto(`${b.url}/settlements/dead-letters?q=${live}`);
  const table = watcher.getByRole('table', { name: 'Dead letters' });
  await expect(table).toContainText(live);

  const support = await newPage(browser);
  await signInAt(support, a, 'support');
  await support.goto(`${a.url}/settlements/dead-letters?q=${live}`);
  await support.getByRole('button', { name: `Replay ${live}` }).click();
  await support.getByRole('alertdialog').getByLabel(/Note/).fill('replayed through the other instance');
  await support.getByRole('alertdialog').getByRole('button', { name: 'Replay dead letter' }).click();
  await expect(toast(support)).toContainText(`Replayed ${live}`);
  // B hears of it (its listener on the primary), waits for its replica to have it, and the page refetches.
  await expect(table).toContainText('No dead letters match these filters.');
  await Promise.all([watcher.context().close(), support.context().close()]);
});

/**
 * Runs `check`; should it fail, the failure carries what was going on: the job's row,
 * every other session on the primary (state, wait, the start of its statement) and the
 * last lines each instance logged. A stalled worker is otherwise silent.
 */
async function diagnosedOnFailure(job: number, check: () => Promise<void>): Promise<void> {
  try {
    await check();
  } catch (error) {
    const { rows: jobs } = await primary.query(
      `select id, status, processed_count, worker_instance, worker_lease_until, clock_timestamp() as now
       from keel.bulk_replay order by id`,
    );
    const { rows: sessions } = await primary.query(
      `select pid, application_name, state, wait_event_type, wait_event, now() - xact_start as in_transaction,
       left(query, 160) as query
         from pg_stat_activity where pid <> pg_backend_pid() and datname = current_database() order by pid`,
    );
    const logs = [a, b].map((instance) => `${instance.name}:\n${instance.output().split('\n').slice(-40).join('\n')}`);
    const detail = [`job ${job}`, JSON.stringify(jobs, null, 1), JSON.stringify(sessions, null, 1), ...logs].join(
      '\n\n',
    );
    await test.info().attach('bulk handoff diagnostics', { body: detail, contentType: 'text/plain' });
    throw new Error(`${(error as Error).message}\n\n${detail}`);
  }
}

test('a bulk job is worked by one instance; killing it hands the job to the other', async ({ browser }) => {
  // Eight batches: enough to kill the worker mid-job, few enough for a loaded 2-core machine.
  test.setTimeout(180_000);
  const items = 8_192;
  const prefix = `mi-bulk-${run}-`;
  await primary.query(
    `insert into settle.dead_letters (receipt_id, finalized_at, attempts, reason, canonical_json, recorded_at_ms)
     select $1 || lpad(i::text, 6, '0'), 1, 3, 'rpc', '{}', 1000 + i from generate_series(1, $2::int) i`,
    [prefix, items],
  );
  // A job as a second person's start leaves it: RUNNING, its dead letters frozen. The starter
  // must still hold the permission when each batch runs, as an admin does.
  const { rows: users } = await primary.query(
    `select id, username from keel."user" where username in ('support', 'admin') order by username`,
  );
  const [admin, support] = users as { id: string; username: string }[];
  // The job and its items in one statement: a worker that found the job RUNNING with no items
  // yet would rightly complete it at once, with nothing processed.
  const { rows: jobs } = await primary.query(
    `with job as (
       insert into keel.bulk_replay (created_by_id, created_by_login, started_by_id, started_by_login, started_by_role,
       note, filter,
         action, status, item_count, started_at)
       values ($1, $2, $3, $4, 'admin', 'two-instance handoff', jsonb_build_object('receiptIdPrefix', $5::text,
       'asOfMs', 0),
         'REPLAY', 'RUNNING', $6, clock_timestamp())
       returning id),
     items as (
       insert into keel.bulk_replay_item (job, receipt_id, recorded_at_ms)
       select job.id, receipt_id, recorded_at_ms from job, settle.dead_letters where starts_with(receipt_id, $5::text))
     select id from job`,
    [support!.id, support!.username, admin!.id, admin!.username, prefix, items],
  );
  const job = Number(jobs[0].id);
  const jobRow = async () =>
    (await primary.query(`select status, processed_count, worker_instance from keel.bulk_replay where id = $1`, [job]))
      .rows[0] as {
      status: string;
      processed_count: number;
      worker_instance: string | null;
    };
  await diagnosedOnFailure(job, () =>
    expect.poll(async () => (await jobRow()).processed_count, { timeout: 60_000, intervals: [50] }).toBeGreaterThan(0),
  );
  const owner = (await jobRow()).worker_instance;
  expect(['keel-a', 'keel-b']).toContain(owner);
  // Two batches by the same instance, the other idle beside it the while.
  await diagnosedOnFailure(job, () =>
    expect
      .poll(async () => (await jobRow()).processed_count, { timeout: 60_000, intervals: [50] })
      .toBeGreaterThanOrEqual(2_048),
  );
  expect((await jobRow()).worker_instance).toBe(owner);
  const takeovers = () =>
    [a, b].flatMap((instance) => instance.output().split('\n')).filter((line) => line.includes('taken over'));
  expect(takeovers()).toEqual([]);
  const [worker, survivor] = owner === 'keel-a' ? [a, b] : [b, a];
  worker.kill();
  const atKill = await jobRow();
  expect(atKill.status).toBe('RUNNING');
  expect(atKill.processed_count).toBeLessThan(items);

  // The survivor takes the job once the killed instance's lease runs out, and finishes it.
  await diagnosedOnFailure(job, () =>
    expect.poll(async () => (await jobRow()).status, { timeout: 120_000 }).toBe('COMPLETED'),
  );
  expect(await jobRow()).toMatchObject({ processed_count: items, worker_instance: survivor.name });
  expect(takeovers()).toEqual([expect.stringContaining(`"from":"${owner}"`)]);
  const { rows: replays } = await primary.query(
    `select count(*)::int as replays, count(distinct receipt_id)::int as receipts from keel.settlement_replay
     where bulk_job = $1`,
    [job],
  );
  expect(replays[0]).toEqual({ replays: items, receipts: items });
  expect(
    (
      await primary.query(`select count(*)::int as n from settle.dead_letters where starts_with(receipt_id, $1)`, [
        prefix,
      ])
    ).rows[0].n,
  ).toBe(0);

  const page = await newPage(browser);
  await signInAt(page, survivor, 'viewer');
  await page.goto(`${survivor.url}/settlements/bulk/${job}`);
  await expect(page.getByTestId('bulk-worker')).toHaveText(survivor.name);
  await expect(page.getByTestId('bulk-progress')).toHaveText(
    `${items.toLocaleString('en-US')} of ${items.toLocaleString('en-US')} items processed`,
  );
  await page.context().close();
});
