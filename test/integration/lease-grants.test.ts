import { sql } from 'drizzle-orm';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { postgresDeadLetterReplayStore } from '../../lib/adapters/settlement-replay';
import { postgresSettlementStore } from '../../lib/simulator/adapters/settlement-store';
import { createDatabase } from '../../lib/db/client';
import { inQueueState, leasedAt } from '../../lib/db/sql/queue-state';
import { LEASE_GRANT_GRACE_MS, leasedReceipts, pruneExpiredLeaseGrants } from '../../lib/db/sql/lease-grants';
import { SeededRandom } from '../../lib/demo/random';
import type { RetryPolicy, SettlementAttemptClaim, SettlementOutcome } from '../../lib/domain/settlement';
import { COUNT_CAP } from '../../lib/domain/cursor';
import {
  listSettlementQueue,
  PREFIX_SORT_CAP,
  parseSettlementCursor,
  type SettlementCursor,
} from '../../lib/queries/settlements';
import { queueFiltersSchema } from '../../lib/queries/settlements-types';
import { sampleMetrics } from '../../lib/workers/metric-sampler';
import { freshDatabase } from '../support/database';

const { pool, db, newPool } = await freshDatabase();
const T0 = 1_900_000_000_000;
const SECOND = 1_000;
const MIN = 60_000;
// Short backoffs, so retried rows come due again while the test's clock moves.
const POLICY: RetryPolicy = { maxRetries: 4, initialBackoffMs: 2_000, backoffMultiplier: 2, backoffCapMs: 30_000 };

/** Rows in chunks (the one-place trigger locks per receipt); many share a due time, so keys tie on time. */
async function queueRows(prefix: string, count: number, firstDueMs: number, spreadMs: number): Promise<void> {
  for (let start = 0; start < count; start += 2_000) {
    await pool.query(
      `insert into settle.attempts (receipt_id, finalized_at, work_kind, attempts, next_visible_at_ms, row_version,
       reason_code, updated_at_ms)
       select $1 || lpad(n::text, 6, '0'), 1, case when n % 3 = 0 then 'retry_scheduled'
       else 'pending_observation' end, n % 5,
              $2::bigint + (n * 7919) % $3::bigint / 500 * 500, 0, case n % 3 when 0 then 'rpc' when 1
              then 'backend' end, 1
       from generate_series($4::int, $5::int) as n`,
      [prefix, firstDueMs, spreadMs, start, Math.min(start + 1_999, count - 1)],
    );
  }
}

const queue = (filters: Record<string, string>) => queueFiltersSchema.parse(filters);

/** The next page's cursor as the read's schema decodes it (lib/reads/settlements.ts). */
function opened(cursor: string): SettlementCursor {
  const decoded = parseSettlementCursor(cursor);
  if (decoded === null || decoded === 'invalid') throw new Error('the list gave out a cursor it refuses');
  return decoded;
}

/** Every leased row the queue list shows under `filters`, page by page. */
async function leasedPages(filters: Record<string, string>, nowMs: number, pageSize: number): Promise<string[]> {
  const seen: string[] = [];
  let cursor: SettlementCursor | null = null;
  for (let i = 0; i < 1_000; i += 1) {
    const page = await listSettlementQueue(
      db,
      { ...queue({ ...filters, state: 'leased' }), cursor },
      { nowMs, pageSize, sample: null },
    );
    expect(page.rows.every((r) => r.state === 'leased')).toBe(true);
    seen.push(...page.rows.map((r) => r.receiptId));
    if (!page.nextCursor) return seen;
    cursor = opened(page.nextCursor);
  }
  throw new Error('paging did not end');
}

/** Every page of a due or retry tab, following its cursors. */
async function statePages(
  state: 'due' | 'retry_scheduled',
  filters: Record<string, string>,
  nowMs: number,
  pageSize: number,
): Promise<string[]> {
  const seen: string[] = [];
  let cursor: SettlementCursor | null = null;
  for (let i = 0; i < 1_000; i += 1) {
    const page = await listSettlementQueue(
      db,
      { ...queue({ ...filters, state }), cursor },
      { nowMs, pageSize, sample: null },
    );
    expect(page.rows.every((r) => r.state === state)).toBe(true);
    seen.push(...page.rows.map((r) => r.receiptId));
    if (!page.nextCursor) return seen;
    cursor = opened(page.nextCursor);
  }
  throw new Error('paging did not end');
}

/** The rows a plain scan finds in a due or retry tab, in the tab's order. */
async function stateRowsTruth(state: 'due' | 'retry_scheduled', where: string, nowMs: number): Promise<string[]> {
  const { rows } = await db.execute<{ receipt_id: string }>(sql`
    select receipt_id from settle.attempts where ${inQueueState(state, nowMs)} and ${sql.raw(where)}
    order by next_visible_at_ms, receipt_id`);
  return rows.map((r) => r.receipt_id);
}

/** The truth: a plain scan of the table with the state's own test. */
async function leasedTruth(where: string, nowMs: number): Promise<string[]> {
  const { rows } = await db.execute<{ receipt_id: string }>(sql`
    select receipt_id from settle.attempts where ${leasedAt(nowMs)} and ${sql.raw(where)}
    order by next_visible_at_ms, receipt_id`);
  return rows.map((r) => r.receipt_id);
}

/** How many rows a plain scan finds in `state` (the state's own test on every row). */
async function stateTruth(state: 'due' | 'retry_scheduled', where: string, nowMs: number): Promise<number> {
  const { rows } = await db.execute<{ n: number }>(sql`
    select count(*)::int as n from settle.attempts where ${inQueueState(state, nowMs)} and ${sql.raw(where)}`);
  return rows[0]!.n;
}

/** The UI's filters and the same rows as SQL over settle.attempts, ages measured from `nowMs`. */
const FILTERS: { filters: Record<string, string>; where: (nowMs: number) => string }[] = [
  { filters: {}, where: () => 'true' },
  { filters: { reason: 'rpc' }, where: () => `reason_code = 'rpc'` },
  { filters: { minAttempts: '2', maxAttempts: '3' }, where: () => 'attempts between 2 and 3' },
  { filters: { q: 'lg-b-' }, where: () => `receipt_id like 'lg-b-%'` },
  // A prefix with other filters: the prefix pages keep every condition, not the prefix alone.
  {
    filters: { q: 'lg-b-', minAttempts: '1', maxAttempts: '2' },
    where: () => `receipt_id like 'lg-b-%' and attempts between 1 and 2`,
  },
  {
    filters: { q: 'lg-a-', reason: 'rpc', minAge: '1m' },
    where: (nowMs) => `receipt_id like 'lg-a-%' and reason_code = 'rpc' and next_visible_at_ms <= ${nowMs - MIN}`,
  },
  { filters: { minAge: '1m' }, where: (nowMs) => `next_visible_at_ms <= ${nowMs - MIN}` },
  {
    filters: { reason: 'backend', maxAge: '10m' },
    where: (nowMs) => `reason_code = 'backend' and next_visible_at_ms >= ${nowMs - 10 * MIN}`,
  },
];

describe('the leased list and count from lease grants', () => {
  it('equal a scan of the table after random claims, outcomes, requeues and time moving', async () => {
    await queueRows('lg-a-', 400, T0 - 10 * MIN, 12 * MIN);
    await queueRows('lg-b-', 300, T0 - 5 * MIN, 6 * MIN);
    const random = new SeededRandom(20261201);
    // Claimers on connections of their own, so claims in one step run concurrently.
    const claimers = Array.from({ length: 3 }, () => postgresSettlementStore(createDatabase(newPool(2))));
    const store = postgresSettlementStore(db);
    let held: SettlementAttemptClaim[] = [];
    let nowMs = T0;
    let checks = 0;
    let sawLeased = 0;
    let refusedRequeues = 0;

    for (let step = 0; step < 70; step += 1) {
      // New rows keep arriving, some due earlier than rows already leased: inside live grants' ranges.
      await queueRows(`lg-${step % 2 ? 'a' : 'b'}-${step}-`, random.int(5, 30), nowMs - 8 * MIN, 10 * MIN);
      // Claims: concurrent claimDue with various batches and leases, sometimes one receipt by id.
      // The last claimer's clock sometimes runs ahead (a worker passes its own clock): it
      // claims rows the requeues below, at the console's clock, could still move earlier.
      const claimed = await Promise.all(
        claimers.map(async (claimer, i) => {
          if (!random.chance(0.7)) return [];
          const claimAtMs =
            i === claimers.length - 1 && random.chance(0.5) ? nowMs + random.int(1, 30) * SECOND : nowMs;
          if (random.chance(0.2)) {
            const { rows } = await pool.query<{ receipt_id: string }>(
              `select receipt_id from settle.attempts order by md5(receipt_id || $1) limit 1`,
              [random.hex(4)],
            );
            if (!rows[0]) return [];
            const one = await claimer.claimReceipt(
              rows[0].receipt_id,
              `worker-${i}`,
              claimAtMs,
              random.int(1, 40) * SECOND,
            );
            if (!one.ok) throw new Error(one.error.kind);
            return one.value ? [one.value] : [];
          }
          const batch = await claimer.claimDue(
            `worker-${i}`,
            claimAtMs,
            random.int(1, 60) * SECOND,
            random.pick([1, 3, 10, 25, 64]),
          );
          if (!batch.ok) throw new Error(batch.error.kind);
          return batch.value;
        }),
      );
      held.push(...claimed.flat());

      // Outcomes for some held claims: finished, retried (the key moves), dead-lettered; one at a time or as a batch.
      const outcomes: { claim: SettlementAttemptClaim; outcome: SettlementOutcome }[] = [];
      held = held.filter((claim) => {
        if (!random.chance(0.3)) return true;
        const roll = random.next();
        const outcome: SettlementOutcome =
          roll < 0.4
            ? { kind: 'Accepted' }
            : roll < 0.85
              ? { kind: 'Retryable', code: 'rpc' }
              : { kind: 'Permanent', code: 'signature' };
        outcomes.push({ claim, outcome });
        return false;
      });
      if (random.chance(0.5)) {
        const result = await store.recordClaimedOutcomes(outcomes, POLICY, nowMs);
        if (!result.ok) throw new Error(result.error.kind);
      } else {
        for (const { claim, outcome } of outcomes) await store.recordClaimedOutcome(claim, outcome, POLICY, nowMs);
      }

      // Requeues of random rows, leased or not, and of leased rows not yet due at this clock (a
      // requeue would move those earlier, out of their grant's range): a live lease is never moved.
      const { rows: picks } = await pool.query<{ receipt_id: string; row_version: number; leased: boolean }>(
        `(select receipt_id, row_version::int, lease_owner is not null and lease_until_ms > $1 as leased
          from settle.attempts order by md5(receipt_id || $2) limit 3)
         union
         (select receipt_id, row_version::int, true from settle.attempts
          where lease_owner is not null and lease_until_ms > $1 and next_visible_at_ms > $1
          order by md5(receipt_id || $2) limit 2)`,
        [nowMs, random.hex(4)],
      );
      for (const pick of picks) {
        const moved = await db.transaction((tx) =>
          postgresDeadLetterReplayStore(tx).requeue(pick.receipt_id, pick.row_version, nowMs),
        );
        if (pick.leased) {
          expect(moved).toBeNull();
          refusedRequeues += 1;
        } else {
          expect(moved).toMatchObject({ receiptId: pick.receipt_id, leaseUntilMs: null });
        }
      }

      // Time moves (sometimes not at all), and expired grants are pruned now and then, by a
      // pruner whose clock may be ahead of the reads below by up to the grace.
      nowMs += random.pick([0, 500, 2 * SECOND, 7 * SECOND, 20 * SECOND]);
      if (random.chance(0.3))
        await db.execute(pruneExpiredLeaseGrants(sql`${nowMs + random.int(0, LEASE_GRANT_GRACE_MS)}::bigint`));

      // The check: list (paged) and count under a random filter, and the unfiltered count on every tab.
      const { filters, where } = random.pick(FILTERS);
      const truth = await leasedTruth(where(nowMs), nowMs);
      expect(await leasedPages(filters, nowMs, random.pick([1, 4, 11, 50]))).toEqual(truth);
      const tab = await listSettlementQueue(db, queue({ ...filters, state: random.pick(['leased', 'due', 'all']) }), {
        nowMs,
        sample: null,
      });
      expect(tab.stateCounts.leased).toEqual({ value: truth.length, capped: false });
      // Due and retry rows are counted as the rows at that side of the clock less the leased ones among them.
      expect(tab.stateCounts.due).toEqual({ value: await stateTruth('due', where(nowMs), nowMs), capped: false });
      expect(tab.stateCounts.retry_scheduled).toEqual({
        value: await stateTruth('retry_scheduled', where(nowMs), nowMs),
        capped: false,
      });
      // The due and retry tabs' rows, paged, under the same filter (a receipt prefix reads them another way).
      for (const state of ['due', 'retry_scheduled'] as const) {
        expect(await statePages(state, filters, nowMs, random.pick([7, 50]))).toEqual(
          await stateRowsTruth(state, where(nowMs), nowMs),
        );
      }
      const first = await listSettlementQueue(db, queue({ ...filters, state: 'leased' }), { nowMs, sample: null });
      expect(first.count).toEqual({ value: truth.length, capped: false });
      checks += 1;
      sawLeased = Math.max(sawLeased, (await leasedTruth('true', nowMs)).length);
    }
    // The run exercised what it claims to: many leased rows at once, and refused requeues.
    expect(checks).toBe(70);
    expect(sawLeased).toBeGreaterThan(50);
    expect(refusedRequeues).toBeGreaterThan(0);
  }, 120_000);

  it('keeps a leased row inside its grant when a requeue runs on a clock behind the claimer', async () => {
    const NOW = T0 + 1_800_000;
    await queueRows('lk-', 3, NOW + 10 * SECOND, 1);
    // A worker whose clock runs 20 s ahead claims a row the console still sees as a future retry.
    const claim = await postgresSettlementStore(db).claimReceipt(
      'lk-000001',
      'worker-ahead',
      NOW + 20 * SECOND,
      30 * SECOND,
    );
    expect(claim.ok && claim.value?.receiptId).toBe('lk-000001');
    const { rows } = await pool.query<{ row_version: number }>(
      `select row_version::int from settle.attempts where receipt_id = 'lk-000001'`,
    );
    // The requeue would move it to the console's now, before its grant's range: it is refused.
    const moved = await db.transaction((tx) =>
      postgresDeadLetterReplayStore(tx).requeue('lk-000001', rows[0]!.row_version, NOW),
    );
    expect(moved).toBeNull();
    const leased = await listSettlementQueue(db, queue({ state: 'leased', q: 'lk-' }), { nowMs: NOW, sample: null });
    expect(leased.rows.map((r) => [r.receiptId, r.nextVisibleAtMs])).toEqual([['lk-000001', NOW + 10 * SECOND]]);
    expect(leased.count).toEqual({ value: 1, capped: false });
    // Once the lease has lapsed the requeue goes ahead and clears the lease with the move.
    const later = NOW + 20 * SECOND + 30 * SECOND;
    const requeued = await db.transaction((tx) =>
      postgresDeadLetterReplayStore(tx).requeue('lk-000001', rows[0]!.row_version, later),
    );
    expect(requeued).toMatchObject({ receiptId: 'lk-000001', nextVisibleAtMs: NOW + 10 * SECOND, leaseUntilMs: null });
  });

  it('reads the leased list by index range scans, never a sequential scan of attempts', async () => {
    const NOW = T0 + 3_600_000;
    await pool.query(`delete from settle.attempts`);
    await pool.query(`delete from settle.lease_grants`);
    await queueRows('lx-', 50_000, NOW - 30 * MIN, 60 * MIN);
    const claimed = await postgresSettlementStore(db).claimDue('worker-x', NOW, 30 * SECOND, 5);
    expect(claimed.ok && claimed.value.length).toBe(5);
    await pool.query('analyze settle.attempts');
    await pool.query('analyze settle.lease_grants');

    // The statements the list sends, recorded, then explained with their parameters.
    const recorded: { text: string; values: unknown[] }[] = [];
    const recording = new Proxy(pool, {
      get(target, name, receiver) {
        if (name !== 'query') return Reflect.get(target, name, receiver);
        return (query: string | { text: string; values?: unknown[] }, params?: unknown[]) => {
          const text = typeof query === 'string' ? query : query.text;
          recorded.push({ text, values: params ?? (typeof query === 'string' ? [] : query.values) ?? [] });
          return (target.query as (...args: unknown[]) => unknown)(query, params);
        };
      },
    }) as pg.Pool;
    const page = await listSettlementQueue(createDatabase(recording), queue({ state: 'leased' }), {
      nowMs: NOW,
      sample: null,
    });
    expect(page.rows.map((r) => r.receiptId)).toEqual(claimed.ok ? claimed.value.map((c) => c.receiptId) : []);
    expect(page.count).toEqual({ value: 5, capped: false });
    const explain = async (statement: { text: string; values: unknown[] }) =>
      (await pool.query(`explain ${statement.text}`, statement.values)).rows
        .map((r) => r['QUERY PLAN'] as string)
        .join('\n');
    // The page: the one statement that reads the grants.
    const pages = recorded.filter(
      (s) => /lease_grants/.test(s.text) && /limit/.test(s.text) && !/count\(\*\)/.test(s.text),
    );
    expect(pages).toHaveLength(1);
    const pagePlan = await explain(pages[0]!);
    // The count, as countsUpToCap reads it (its one statement also holds the other states' counts).
    const countPlan = (
      await db.execute<{ 'QUERY PLAN': string }>(sql`explain
      select count(*)::int from (select 1 from ${leasedReceipts(NOW, sql`true`)} leased where true
      limit ${COUNT_CAP + 1}) t`)
    ).rows
      .map((r) => r['QUERY PLAN'])
      .join('\n');
    for (const plan of [pagePlan, countPlan]) {
      expect(plan).not.toMatch(/Seq Scan on attempts/);
      expect(plan).toMatch(
        /Index (Only )?Scan using attempts_due_idx on attempts|Bitmap Index Scan on attempts_due_idx/,
      );
      expect(plan).toMatch(/lease_grants/);
    }
    console.info(`[plan] leased page over 50,005 attempts, 5 leased:\n${pagePlan}\n[plan] leased count:\n${countPlan}`);
  }, 120_000);

  it('the metric sampler deletes grants expired for longer than the grace, and keeps the rest', async () => {
    const serverNow = Number(
      (await pool.query(`select (extract(epoch from clock_timestamp()) * 1000)::bigint as ms`)).rows[0].ms,
    );
    await pool.query(`delete from settle.lease_grants`);
    await pool.query(`delete from keel.metric_sample`);
    await pool.query(
      `insert into settle.lease_grants (lease_until_ms, lo_next_visible_at_ms, lo_receipt_id, hi_next_visible_at_ms,
       hi_receipt_id)
       values ($1, 1, 'a', 2, 'b'), ($2, 1, 'a', 2, 'b'), ($3, 1, 'a', 2, 'b')`,
      [serverNow - LEASE_GRANT_GRACE_MS - 1, serverNow - LEASE_GRANT_GRACE_MS + 5 * MIN, serverNow + 3_600_000],
    );
    expect(await sampleMetrics(db, { staleThresholdMs: 900_000 })).not.toBeNull();
    const { rows } = await pool.query<{ lease_until_ms: string }>(
      `select lease_until_ms from settle.lease_grants order by lease_until_ms`,
    );
    expect(rows.map((r) => Number(r.lease_until_ms))).toEqual([
      serverNow - LEASE_GRANT_GRACE_MS + 5 * MIN,
      serverNow + 3_600_000,
    ]);
  });

  it('pages a receipt prefix in due order either way: its matches sorted, or the due order walked', async () => {
    const NOW = T0 + 7_200_000;
    // More due rows under `pw-` than the prefix read sorts (PREFIX_SORT_CAP): the due order is walked.
    await queueRows('pw-', PREFIX_SORT_CAP * 2 + 500, NOW - 30 * MIN, 40 * MIN);
    const store = postgresSettlementStore(db);
    for (const receipt of ['pw-000004', 'pw-000010', 'pw-000011', 'pw-003100']) {
      const claimed = await store.claimReceipt(receipt, 'worker-pw', NOW, 5 * MIN);
      expect(claimed.ok && claimed.value?.receiptId).toBe(receipt);
    }
    const cases: [Record<string, string>, string][] = [
      [{ q: 'pw-' }, `receipt_id like 'pw-%'`],
      [{ q: 'pw-', reason: 'backend' }, `receipt_id like 'pw-%' and reason_code = 'backend'`],
      [
        { q: 'pw-', minAttempts: '2', minAge: '5m' },
        `receipt_id like 'pw-%' and attempts >= 2 and next_visible_at_ms <= ${NOW - 5 * MIN}`,
      ],
      // Few matches: sorted from the prefix index.
      [{ q: 'pw-00001' }, `receipt_id like 'pw-00001%'`],
      [{ q: 'pw-0030' }, `receipt_id like 'pw-0030%'`],
    ];
    const due = await stateRowsTruth('due', `receipt_id like 'pw-%'`, NOW);
    expect(due.length).toBeGreaterThan(PREFIX_SORT_CAP);
    expect(due).not.toContain('pw-000004');
    for (const [filters, where] of cases) {
      for (const state of ['due', 'retry_scheduled'] as const) {
        expect(await statePages(state, filters, NOW, 250)).toEqual(await stateRowsTruth(state, where, NOW));
      }
    }
  }, 120_000);
});
