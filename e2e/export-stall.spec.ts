import http from 'node:http';
import { expect, test } from '@playwright/test';
import { e2eDatabase } from './support/database';
import { ownKeelInstance } from './support/replica-cluster';
import { DEMO_PASSWORD, sessionCookie, signIn } from './support/session';

/**
 * On a Keel instance and database of its own (beside the shared e2e server, on the second
 * worker): the spec waits out the export idle timeout, and its stalled exports and filler
 * rows are nobody else's business.
 */
const own = ownKeelInstance(test, 'keel-export');

const USERS = ['viewer', 'operator', 'approver', 'approver2', 'support', 'admin'];
const STALLED = 50;
// Far more CSV than loopback socket buffers hold (about 450 bytes a row), so an export
// whose client stops reading stays open in its snapshot instead of finishing.
const FILLER_ROWS = 60_000;
// EXPORT_LIMITS in lib/server/audit-export.ts: two per role, and the six users hold five roles
// (approver and approver2 share theirs), so every role's share is taken.
const EXPORT_SLOTS = 10;

interface OpenedExport {
  status: number;
  retryAfter: string | undefined;
  code: string | undefined;
  request: http.ClientRequest;
}

/** Starts a download, reads its first bytes and then stops reading (a 200), or reads the whole refusal. */
function stalledExport(cookie: string): Promise<OpenedExport> {
  return new Promise((resolve, reject) => {
    const request = http.get(
      `${own.instance().url}/api/audit/export`,
      { headers: { cookie }, agent: false },
      (response) => {
        const status = response.statusCode ?? 0;
        if (status === 200) {
          response.once('data', () => {
            response.pause();
            resolve({ status, retryAfter: undefined, code: undefined, request });
          });
          return;
        }
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => {
          const code = (JSON.parse(body) as { code?: string }).code;
          resolve({ status, retryAfter: response.headers['retry-after'] as string | undefined, code, request });
        });
      },
    );
    request.on('error', reject);
  });
}

async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const value = await work();
  return [value, performance.now() - started];
}

const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))]!;

test('50 stalled CSV exports take no request connection: pages, API and health answer; the exports are let go', async ({
  browser,
}) => {
  test.setTimeout(300_000);
  const ORIGIN = own.instance().url;
  const db = await e2eDatabase(own.database);
  try {
    await db.query(
      `insert into keel.audit_event (at, actor_login, actor_role, action, target_kind, target_id, reason, outcome)
       select now() - interval '400 days' - make_interval(secs => i), 'e2e-filler', 'viewer', 'e2e.export_filler',
       'e2e', 'filler-' || i, repeat('x', 300), 'APPLIED'
       from generate_series(1, $1::int) as i`,
      [FILLER_ROWS],
    );
    const exportSessions = async (state: string) =>
      (
        await db.query<{ n: number }>(
          `select count(*)::int as n from pg_stat_activity where datname = current_database()
           and application_name = 'keel-export' and state = $1`,
          [state],
        )
      ).rows[0]!.n;
    // Pinned: a request connection idle in a transaction open since the exports stalled, not
    // one caught between two statements of a short transaction (the demo runtime's, a worker's).
    const requestPoolPinned = async (since: Date) =>
      (
        await db.query<{ n: number }>(
          `select count(*)::int as n from pg_stat_activity where datname = current_database()
           and application_name = 'keel'
             and state = 'idle in transaction' and xact_start <= $1`,
          [since],
        )
      ).rows[0]!.n;

    const cookies = new Map<string, string>();
    for (const user of USERS) cookies.set(user, await sessionCookie(user, DEMO_PASSWORD, ORIGIN));

    // 50 downloads at once, spread over six users: each reads its first bytes, then stops.
    const stalledAt = performance.now();
    const opened = await Promise.all(
      Array.from({ length: STALLED }, (_, i) => stalledExport(cookies.get(USERS[i % USERS.length]!)!)),
    );
    const admitted = opened.filter((o) => o.status === 200);
    const refused = opened.filter((o) => o.status !== 200);
    expect(admitted).toHaveLength(EXPORT_SLOTS);
    expect(refused).toHaveLength(STALLED - EXPORT_SLOTS);
    for (const refusal of refused) {
      expect(refusal).toMatchObject({ status: 429, code: 'EXPORT_BUSY' });
      expect(Number(refusal.retryAfter)).toBeGreaterThan(0);
    }
    // The admitted ones are really stalled in their snapshots, on the export pool only.
    await expect.poll(() => exportSessions('idle in transaction')).toBe(EXPORT_SLOTS);
    const stalledSince = (await db.query<{ at: Date }>('select clock_timestamp() as at')).rows[0]!.at;

    // Meanwhile: health, the read API and pages answer promptly.
    const healthMs: number[] = [];
    for (let i = 0; i < 20; i += 1) {
      const [response, ms] = await timed(() => fetch(`${ORIGIN}/api/health`));
      expect(response.status).toBe(200);
      expect(((await response.json()) as { status: string }).status).toBe('ok');
      healthMs.push(ms);
    }
    const viewer = cookies.get('viewer')!;
    const apiMs: number[] = [];
    for (let i = 0; i < 10; i += 1) {
      const [response, ms] = await timed(() =>
        fetch(`${ORIGIN}/api/audit?outcome=APPLIED`, { headers: { cookie: viewer } }),
      );
      expect(response.status).toBe(200);
      expect(((await response.json()) as { rows: unknown[] }).rows.length).toBeGreaterThan(0);
      apiMs.push(ms);
    }
    const pageMs: number[] = [];
    const context = await browser.newContext({ baseURL: ORIGIN });
    const page = await context.newPage();
    await signIn(page, 'operator', DEMO_PASSWORD, ORIGIN);
    for (const [path, heading] of [
      ['/audit', 'Audit'],
      ['/executions', 'Executions'],
      ['/', 'Overview'],
      ['/settlements', 'Settlements'],
    ] as const) {
      const [, ms] = await timed(async () => {
        const response = await page.goto(path);
        expect(response?.status()).toBe(200);
        await expect(page.getByRole('heading', { level: 1, name: heading })).toBeVisible();
      });
      pageMs.push(ms);
    }
    expect(await requestPoolPinned(stalledSince)).toBe(0);
    // All of the above ran while the admitted exports were still stalled.
    expect(await exportSessions('idle in transaction')).toBe(EXPORT_SLOTS);
    // A 200 "ok" already shows health did not wait for a request connection (its own pool
    // gives up after 2 s and answers 503); the bound catches a hang, with room for a loaded CI machine.
    expect(quantile(healthMs, 1)).toBeLessThan(5_000);

    // The server lets go of the stalled exports by itself (the idle timeout): no export
    // session is left in a transaction, the slots are free, and a new export runs to its end.
    await expect.poll(() => exportSessions('idle in transaction'), { timeout: 90_000 }).toBe(0);
    const releasedMs = performance.now() - stalledAt;
    const [full, fullMs] = await timed(async () => {
      const response = await fetch(`${ORIGIN}/api/audit/export`, { headers: { cookie: viewer } });
      expect(response.status).toBe(200);
      return response.text();
    });
    // A viewer's export leaves out the rows about users and sign-in (lib/queries/audit.ts).
    const total = (
      await db.query<{ n: number }>(
        `select count(*)::int as n from keel.audit_event
         where target_kind not in ('user', 'sso_subject', 'sso_provider') and action not like 'auth.%'`,
      )
    ).rows[0]!.n;
    expect(full.endsWith('\r\n')).toBe(true);
    expect(full.split('\r\n').length - 2).toBe(total);
    for (const stalled of admitted) stalled.request.destroy();

    const figures = {
      stalledExports: STALLED,
      admitted: admitted.length,
      refused: refused.length,
      healthMs: { median: Math.round(quantile(healthMs, 0.5)), max: Math.round(quantile(healthMs, 1)) },
      readApiMs: { median: Math.round(quantile(apiMs, 0.5)), max: Math.round(quantile(apiMs, 1)) },
      pageMs: pageMs.map(Math.round),
      stalledReleasedAfterMs: Math.round(releasedMs),
      fullExport: { rows: total, ms: Math.round(fullMs) },
    };
    console.log(`export-stall figures ${JSON.stringify(figures)}`);
    await context.close();
  } finally {
    await db.end();
  }
});
