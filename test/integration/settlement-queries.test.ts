import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { METRICS } from '../../lib/observability/metric-catalogue';
import { postgresSettlementUnitOfWork } from '../../lib/adapters/settlement-replay';
import type { Actor } from '../../lib/domain/actor';
import {
  deadLetterGroups,
  listBulkReplays,
  listDeadLetterPage,
  listSettlementQueue,
  readReceiptHistory,
  parseBulkReplayCursor,
  parseSettlementCursor,
  PREFIX_SORT_CAP,
  settlementNowMs,
  type SettlementCursor,
} from '../../lib/queries/settlements';
import {
  deadLetterFiltersSchema,
  queueFiltersSchema,
  toDeadLetterFilter,
  type DeadLetterFilters,
  type QueueFilters,
} from '../../lib/queries/settlements-types';
import { previewBulkReplay } from '../../lib/services/bulk-replay';
import { replayDeadLetter } from '../../lib/services/dead-letter-actions';
import { freshDatabase } from '../support/database';
import { createDatabase } from '../../lib/db/client';
import { DEFAULT_RETRY_POLICY, deadLetterCanonicalJson, failureDetailSha256Hex } from '../../lib/domain/settlement';
import { postgresSettlementStore } from '../../lib/simulator/adapters/settlement-store';
import { grantHeldLeases } from '../../lib/db/sql/lease-grants';

const { pool, db } = await freshDatabase();
const NOW = 1_700_000_000_000;
const MIN = 60_000;
const HOUR = 3_600_000;
const support: Actor = { id: 'u-support', login: 'support', name: 'Sam Support', role: 'support' };

/** A database over the test's pool that keeps the text of every statement sent through it. */
function recordingDatabase() {
  const sent: string[] = [];
  const recording = new Proxy(pool, {
    get(target, name, receiver) {
      if (name !== 'query') return Reflect.get(target, name, receiver);
      return (query: string | { text: string }, ...rest: unknown[]) => {
        sent.push(typeof query === 'string' ? query : query.text);
        return (target.query as (...args: unknown[]) => unknown)(query, ...rest);
      };
    },
  }) as pg.Pool;
  return { recorded: createDatabase(recording), sent };
}

// The queue: many rows share a visibility time, so paging must break ties on receipt id.
await pool.query(
  `
  insert into settle.attempts (receipt_id, finalized_at, work_kind, attempts, next_visible_at_ms, row_version,
  lease_owner, lease_token, lease_until_ms, reason_code, updated_at_ms)
  select 'q-due-' || lpad(n::text, 3, '0'), 1, 'pending_observation', n % 4, $1::bigint - (n % 7) * ${MIN}, 0, null,
  null, null, null, 1 from generate_series(1, 120) n
  union all
  select 'q-lease-' || lpad(n::text, 3, '0'), 1, 'pending_observation', n % 3, $1::bigint - (n % 5) * ${MIN}, 1,
  'worker-a', 'tok' || n, $1::bigint + 60000, null, 1 from generate_series(1, 30) n
  union all
  select 'q-lapsed-' || lpad(n::text, 3, '0'), 1, 'retry_scheduled', 2, $1::bigint - ${MIN}, 3, 'worker-b', 'tok' || n,
  $1::bigint - 1000, 'rpc', 1 from generate_series(1, 10) n
  union all
  select 'q-retry-' || lpad(n::text, 3, '0'), 1, 'retry_scheduled', 1 + n % 5, $1::bigint + (1 + n % 5) * ${MIN}, 2,
  null, null, null,
         case when n % 2 = 0 then 'rpc' else 'backend' end, 1 from generate_series(1, 40) n
  union all
  select 'q_%odd', 1, 'pending_observation', 0, $1::bigint, 0, null, null, null, null, 1`,
  [NOW],
);
// Leases written straight into the table get their grants, as a claim writes one.
await db.execute(
  grantHeldLeases(
    (
      await pool.query<{ receipt_id: string }>('select receipt_id from settle.attempts where lease_owner is not null')
    ).rows.map((r) => r.receipt_id),
  ),
);

// Dead letters across reasons and shared recorded times.
const REASONS = ['rpc', 'rpc', 'backend', 'signature', 'invalid_input'];
await pool.query(
  `
  insert into settle.dead_letters (receipt_id, finalized_at, attempts, reason, canonical_json, recorded_at_ms)
  select 'd-' || lpad(n::text, 3, '0'), 1, n % 6, ($2::text[])[1 + n % 5], '{}', $1::bigint - (n % 9) * ${HOUR}
  from generate_series(1, 130) n`,
  [NOW, REASONS],
);

const queue = (filters: Record<string, unknown>) => queueFiltersSchema.parse(filters);
const dead = (filters: Record<string, unknown>) => deadLetterFiltersSchema.parse(filters);

/** The next page's cursor as the read's schema decodes it (lib/reads/settlements.ts). */
function opened(cursor: string): SettlementCursor {
  const decoded = parseSettlementCursor(cursor);
  if (decoded === null || decoded === 'invalid') throw new Error('the list gave out a cursor it refuses');
  return decoded;
}

async function allQueuePages(filters: QueueFilters, pageSize = 7): Promise<string[]> {
  const seen: string[] = [];
  let cursor: SettlementCursor | null = null;
  for (let i = 0; i < 200; i += 1) {
    const page = await listSettlementQueue(db, { ...filters, cursor }, { nowMs: NOW, pageSize });
    seen.push(...page.rows.map((r) => r.receiptId));
    if (!page.nextCursor) return seen;
    cursor = opened(page.nextCursor);
  }
  throw new Error('paging did not end');
}

async function allDeadLetterPages(filters: DeadLetterFilters, pageSize = 9): Promise<string[]> {
  const seen: string[] = [];
  let cursor: SettlementCursor | null = null;
  for (let i = 0; i < 200; i += 1) {
    const page = await listDeadLetterPage(db, { ...filters, cursor }, { nowMs: NOW, pageSize });
    seen.push(...page.rows.map((r) => r.receiptId));
    if (!page.nextCursor) return seen;
    cursor = opened(page.nextCursor);
  }
  throw new Error('paging did not end');
}

const ids = async (text: string, values: unknown[] = []) =>
  (await pool.query<{ receipt_id: string }>(text, values)).rows.map((r) => r.receipt_id);

describe('the settlement queue', () => {
  it('pages each state in due order by keyset, without gaps or repeats', async () => {
    const expected = {
      due: await ids(
        `select receipt_id from settle.attempts where next_visible_at_ms <= $1
         and (lease_owner is null or lease_until_ms <= $1) order by next_visible_at_ms, receipt_id`,
        [NOW],
      ),
      leased: await ids(
        `select receipt_id from settle.attempts where lease_owner is not null and lease_until_ms > $1
         order by next_visible_at_ms, receipt_id`,
        [NOW],
      ),
      retry_scheduled: await ids(
        `select receipt_id from settle.attempts where next_visible_at_ms > $1
         and (lease_owner is null or lease_until_ms <= $1) order by next_visible_at_ms, receipt_id`,
        [NOW],
      ),
      all: await ids(`select receipt_id from settle.attempts order by next_visible_at_ms, receipt_id`),
    };
    expect(expected.due).toHaveLength(131); // 120 due, 10 with a lapsed lease, 1 odd id
    expect(expected.leased).toHaveLength(30);
    expect(expected.retry_scheduled).toHaveLength(40);
    for (const state of ['due', 'leased', 'retry_scheduled', 'all'] as const) {
      const seen = await allQueuePages(queue({ state }));
      expect(seen).toEqual(expected[state]);
      expect(new Set(seen).size).toBe(seen.length);
    }
    const first = await listSettlementQueue(db, queue({}), { nowMs: NOW });
    expect(first.stateCounts).toMatchObject({
      due: { value: 131, capped: false },
      leased: { value: 30, capped: false },
      retry_scheduled: { value: 40, capped: false },
    });
    // The leased rows are counted from their lease grants, exactly: a sample's figure does not stand in.
    const sample = {
      now: new Date(NOW),
      nowMs: NOW,
      sampledAt: new Date(NOW),
      fresh: true,
      rows: [{ metric: METRICS.queueDepth, label: 'leased', value: 29 }],
    };
    const sampled = await listSettlementQueue(db, queue({}), { nowMs: NOW, sample });
    expect(sampled.stateCounts.leased).toEqual({ value: 30, capped: false });
    // Filtered, still exact.
    const leasedPrefix = await listSettlementQueue(db, queue({ q: 'q-lease-' }), { nowMs: NOW });
    expect(leasedPrefix.stateCounts.leased).toEqual({
      value: expected.leased.filter((id) => id.startsWith('q-lease-')).length,
      capped: false,
    });
    expect(first.rows.every((r) => r.state === 'due')).toBe(true);
    // A lapsed lease no longer holds the row: it is due again, and shows who held it.
    const lapsed = await listSettlementQueue(db, queue({ q: 'q-lapsed-' }), { nowMs: NOW });
    expect(lapsed.rows).toHaveLength(10);
    expect(lapsed.rows[0]).toMatchObject({ state: 'due', leaseOwner: 'worker-b', workKind: 'retry_scheduled' });
  });

  it('filters by receipt prefix (literally), reason, attempts and age', async () => {
    expect(await allQueuePages(queue({ state: 'all', q: 'q_%' }))).toEqual(['q_%odd']);
    expect(await allQueuePages(queue({ state: 'all', q: 'q-lease-01' }))).toEqual(
      await ids(
        `select receipt_id from settle.attempts where receipt_id like 'q-lease-01%'
         order by next_visible_at_ms, receipt_id`,
      ),
    );
    const rpcRetries = await allQueuePages(queue({ state: 'retry_scheduled', reason: 'rpc' }));
    expect(rpcRetries).toEqual(
      await ids(
        `select receipt_id from settle.attempts where reason_code = 'rpc' and next_visible_at_ms > $1
         and lease_owner is null order by next_visible_at_ms, receipt_id`,
        [NOW],
      ),
    );
    expect(rpcRetries).toHaveLength(20);
    const attempts = await allQueuePages(queue({ state: 'all', minAttempts: '2', maxAttempts: '3' }));
    expect(attempts).toEqual(
      await ids(
        `select receipt_id from settle.attempts where attempts between 2 and 3 order by next_visible_at_ms, receipt_id`,
      ),
    );
    // Age on the queue: how long a row has been due. At least 3 minutes, at most 5.
    const aged = await listSettlementQueue(db, queue({ state: 'due', minAge: '3m', maxAge: '5m' }), {
      nowMs: NOW,
      pageSize: 500,
    });
    const agedExpected = await ids(
      `select receipt_id from settle.attempts where next_visible_at_ms between $1::bigint - 5 * ${MIN}
       and $1::bigint - 3 * ${MIN}
         and (lease_owner is null or lease_until_ms <= $1) order by next_visible_at_ms, receipt_id`,
      [NOW],
    );
    expect(aged.rows.map((r) => r.receiptId)).toEqual(agedExpected);
    expect(aged.count).toEqual({ value: agedExpected.length, capped: false });
  });

  it('shows no retry under a minimum age, and sends no statement to look for one', async () => {
    const { recorded, sent } = recordingDatabase();
    // A retry is due ahead of the clock: its age is below zero, so a minimum age leaves none.
    const aged = await listSettlementQueue(recorded, queue({ state: 'retry_scheduled', minAge: '1m' }), { nowMs: NOW });
    expect(aged.rows).toEqual([]);
    expect(aged.count).toEqual({ value: 0, capped: false });
    expect(aged.stateCounts.due.value).toBeGreaterThan(0);
    // The retry side of the clock (`next_visible_at_ms > now`) is in no statement, page or count.
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.filter((text) => /next_visible_at_ms > \$/.test(text))).toEqual([]);
    // Under a maximum age instead, the same read finds the retries.
    const recent = await listSettlementQueue(db, queue({ state: 'retry_scheduled', maxAge: '1m' }), { nowMs: NOW });
    expect(recent.count.value).toBe(40);
  });

  it('refuses filters it cannot apply', () => {
    expect(queueFiltersSchema.safeParse({ minAge: '3 weeks' }).success).toBe(false);
    expect(queueFiltersSchema.safeParse({ reason: 'nope' }).success).toBe(false);
    expect(queueFiltersSchema.safeParse({ minAttempts: '4', maxAttempts: '2' }).success).toBe(false);
    expect(queueFiltersSchema.safeParse({ state: 'dead_lettered' }).success).toBe(false);
    expect(queueFiltersSchema.parse({ reason: '', q: '' })).toEqual({});
  });
});

describe('dead letters', () => {
  it('pages newest first by keyset, without gaps or repeats, with and without filters', async () => {
    const seen = await allDeadLetterPages(dead({}));
    expect(seen).toEqual(
      await ids(`select receipt_id from settle.dead_letters order by recorded_at_ms desc, receipt_id desc`),
    );
    expect(seen).toHaveLength(130);
    const filtered = await allDeadLetterPages(dead({ reason: 'rpc', minAttempts: '2', minAge: '2h', maxAge: '6h' }), 4);
    expect(filtered).toEqual(
      await ids(
        `select receipt_id from settle.dead_letters where reason = 'rpc' and attempts >= 2
           and recorded_at_ms between $1::bigint - 6 * ${HOUR} and $1::bigint - 2 * ${HOUR}
           order by recorded_at_ms desc, receipt_id desc`,
        [NOW],
      ),
    );
    expect(filtered.length).toBeGreaterThan(4);
  });

  it('counts what a bulk replay preview of the same filter freezes', async () => {
    const filters = dead({ reason: 'backend', q: 'd-0', maxAttempts: '4' });
    const page = await listDeadLetterPage(db, filters);
    const preview = await previewBulkReplay({ unitOfWork: postgresSettlementUnitOfWork(db) }, support, {
      filter: toDeadLetterFilter(filters),
      note: 'same rows',
    });
    expect(preview.ok && preview.value.itemCount).toBe(page.count.value);
    expect(page.count.value).toBeGreaterThan(0);
  });

  it('groups by reason code with counts equal to SQL counts, under the other filters', async () => {
    const all = await pool.query<{ reason: string; n: number }>(
      `select reason, count(*)::int as n from settle.dead_letters group by reason order by n desc, reason`,
    );
    const groups = await deadLetterGroups(db, dead({ reason: 'signature' }), { nowMs: NOW });
    expect(groups.groups).toEqual(all.rows.map((r) => ({ reason: r.reason, count: { value: r.n, capped: false } })));
    const narrowed = await pool.query<{ reason: string; n: number }>(
      `select reason, count(*)::int as n from settle.dead_letters where attempts <= 2
       and recorded_at_ms >= $1::bigint - 3 * ${HOUR} group by reason`,
      [NOW],
    );
    const narrowedGroups = await deadLetterGroups(db, dead({ maxAttempts: '2', maxAge: '3h' }), { nowMs: NOW });
    expect(Object.fromEntries(narrowedGroups.groups.map((g) => [g.reason, g.count.value]))).toEqual(
      Object.fromEntries(narrowed.rows.map((r) => [r.reason, r.n])),
    );
  });

  it('leaves a reason outside the vocabulary out of the groups, filtered or not', async () => {
    await pool.query(
      `insert into settle.dead_letters (receipt_id, finalized_at, attempts, reason, canonical_json, recorded_at_ms)
       values ('odd-reason', 1, 1, 'not_a_code', '{}', $1)`,
      [NOW],
    );
    try {
      const filtered = await deadLetterGroups(db, dead({ maxAttempts: '2' }), { nowMs: NOW });
      const unfiltered = await deadLetterGroups(db, dead({}), { nowMs: NOW });
      for (const { groups } of [filtered, unfiltered]) {
        expect(groups.length).toBeGreaterThan(0);
        expect(groups.map((g) => g.reason)).not.toContain('not_a_code');
      }
    } finally {
      await pool.query(`delete from settle.dead_letters where receipt_id = 'odd-reason'`);
    }
  });

  it('counts exactly up to 10,000, then 10,000+; under a receipt prefix with no planner estimate first', async () => {
    await pool.query(
      `insert into settle.dead_letters select 'cap-' || n, 1, 1, 'unsupported', '{}', $1
       from generate_series(1, 10005) n`,
      [NOW],
    );
    // Over the cap by reason: the planner's estimate, flagged.
    const byReason = (await listDeadLetterPage(db, dead({ reason: 'unsupported' }))).count;
    expect(byReason).toMatchObject({ capped: true, estimated: true });
    expect(byReason.value).toBeGreaterThan(10_000);
    // Under a receipt prefix the rows are counted straight away: no `explain` goes out first.
    const { recorded, sent } = recordingDatabase();
    expect((await listDeadLetterPage(recorded, dead({ q: 'cap-' }))).count).toEqual({
      value: 10_001,
      capped: true,
      estimated: true,
    });
    // 1000, 10000..10005
    expect((await listDeadLetterPage(recorded, dead({ q: 'cap-1000' }))).count).toEqual({ value: 7, capped: false });
    expect((await listSettlementQueue(recorded, queue({ q: 'cap-' }), { nowMs: NOW })).count).toEqual({
      value: 0,
      capped: false,
    });
    expect(sent.length).toBeGreaterThan(3);
    expect(sent.filter((text) => /^\s*explain/i.test(text))).toEqual([]);
    const groups = await deadLetterGroups(db, dead({}));
    expect(groups.groups[0]).toEqual({ reason: 'unsupported', count: { value: 10_000, capped: true } });
  });

  it('pages dead letters under a receipt prefix: its matches sorted, or the recorded order walked', async () => {
    // More under `pdl-` than the prefix read sorts (PREFIX_SORT_CAP): the recorded order is walked.
    // Recorded times repeat, so the pages break ties on the receipt id.
    await pool.query(
      `insert into settle.dead_letters select 'pdl-' || lpad(n::text, 5, '0'), 1, n % 6,
       case when n % 3 = 0 then 'rpc' else 'backend' end, '{}', $1::bigint - (n % 97) * 1000
       from generate_series(1, $2::int) n`,
      [NOW, PREFIX_SORT_CAP + 500],
    );
    const pages = async (filters: Record<string, unknown>) => {
      const seen: string[] = [];
      let cursor: SettlementCursor | null = null;
      do {
        const page = await listDeadLetterPage(db, { ...dead(filters), cursor }, { nowMs: NOW, pageSize: 300 });
        seen.push(...page.rows.map((r) => r.receiptId));
        cursor = page.nextCursor ? opened(page.nextCursor) : null;
      } while (cursor);
      return seen;
    };
    const truth = async (where: string) =>
      (
        await pool.query<{ receipt_id: string }>(
          `select receipt_id from settle.dead_letters where ${where} order by recorded_at_ms desc, receipt_id desc`,
        )
      ).rows.map((r) => r.receipt_id);
    const cases: [Record<string, unknown>, string][] = [
      [{ q: 'pdl-' }, `receipt_id like 'pdl-%'`],
      [{ q: 'pdl-', reason: 'rpc', minAttempts: '2' }, `receipt_id like 'pdl-%' and reason = 'rpc' and attempts >= 2`],
      // Few matches: sorted from the prefix index.
      [{ q: 'pdl-0001' }, `receipt_id like 'pdl-0001%'`],
      [{ q: 'pdl-020', reason: 'backend' }, `receipt_id like 'pdl-020%' and reason = 'backend'`],
    ];
    expect((await truth(`receipt_id like 'pdl-%'`)).length).toBeGreaterThan(PREFIX_SORT_CAP);
    try {
      for (const [filters, where] of cases) {
        const expected = await truth(where);
        expect(expected.length).toBeGreaterThan(0);
        expect(await pages(filters)).toEqual(expected);
      }
    } finally {
      await pool.query(`delete from settle.dead_letters where receipt_id like 'pdl-%'`);
    }
  });

  it('serves the prefix and attempts filters from indexes', async () => {
    const client = await pool.connect();
    try {
      await client.query('begin');
      await client.query('set local enable_seqscan = off');
      const plan = async (text: string) =>
        (await client.query(`explain ${text}`)).rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(await plan(`select 1 from settle.dead_letters where receipt_id ^@ 'd-01'`)).toMatch(
        /dead_letters_receipt_prefix_idx/,
      );
      // Under a C collation the primary key serves a prefix range
      // too, and is the narrower index since 0018 widened this one.
      expect(await plan(`select 1 from settle.attempts where receipt_id ^@ 'q-'`)).toMatch(
        /attempts_receipt_prefix_idx|attempts_pkey/,
      );
      expect(
        await plan(
          `select 1 from settle.attempts where attempts >= 3 order by attempts, next_visible_at_ms, receipt_id limit 5`,
        ),
      ).toMatch(/attempts_attempts_due_idx/);
    } finally {
      await client.query('rollback');
      client.release();
    }
  });
});

describe('a receipt history and the bulk replay list', () => {
  it('shows where a receipt is, its events, its replay and the audit trail', async () => {
    await pool.query(
      `insert into keel.settlement_event (receipt_id, kind, attempt, reason_code, at_ms)
       values ('d-007', 'dead_lettered', 1, 'rpc', $1)`,
      [NOW],
    );
    const before = await readReceiptHistory(db, 'd-007');
    expect(before).toMatchObject({
      queued: null,
      deadLetter: { receiptId: 'd-007', reason: REASONS[7 % 5] },
      replays: [],
    });
    const replayed = await replayDeadLetter({ unitOfWork: postgresSettlementUnitOfWork(db) }, support, {
      receiptId: 'd-007',
      note: 'ledger back',
      operationId: 'op-history-1',
    });
    expect(replayed.ok).toBe(true);
    const after = await readReceiptHistory(db, 'd-007');
    expect(after).toMatchObject({
      deadLetter: null,
      queued: { state: 'due', attempts: 0, workKind: 'pending_observation' },
    });
    expect(after!.replays).toEqual([
      expect.objectContaining({
        operationId: 'op-history-1',
        actorLogin: 'support',
        note: 'ledger back',
        bulkJob: null,
      }),
    ]);
    expect(after!.events.map((e) => e.kind)).toEqual(['replayed', 'dead_lettered']);
    expect(after!.audit).toEqual([
      expect.objectContaining({
        action: 'settlement.replay',
        actorLogin: 'support',
        outcome: 'APPLIED',
        reason: 'ledger back',
      }),
    ]);
    expect(await readReceiptHistory(db, 'never-seen')).toBeNull();
  });

  it('shows a receipt that crashed its workers: each lapsed claim, then the outcome with its claim', async () => {
    const store = postgresSettlementStore(db);
    const start = 1_900_000_000_000;
    expect(await store.enqueue({ receiptId: 'crash-1', finalizedAt: 1, nowMs: start })).toEqual({ ok: true });
    let claim = null;
    // Three workers claim it in turn; the first two die with it, so their leases lapse.
    for (const [worker, at] of [
      ['w-1', start],
      ['w-2', start + 2_000],
      ['w-3', start + 4_000],
    ] as const) {
      const claimed = await store.claimReceipt('crash-1', worker, at, 1_000);
      if (!claimed.ok || !claimed.value) throw new Error(`${worker} could not claim`);
      claim = claimed.value;
    }
    const lapsed = await readReceiptHistory(db, 'crash-1');
    expect(lapsed!.events.map((e) => [e.kind, e.atMs, e.claimedAtMs])).toEqual([
      ['claimed', start + 2_000, null],
      ['claimed', start, null],
    ]);
    expect(lapsed!.queued).toMatchObject({ leaseOwner: 'w-3', leaseUntilMs: start + 5_000 });
    await store.recordClaimedOutcome(claim!, { kind: 'Accepted' }, DEFAULT_RETRY_POLICY, start + 4_300);
    const done = await readReceiptHistory(db, 'crash-1');
    expect(done!.queued).toBeNull();
    expect(done!.events.map((e) => [e.kind, e.attempt, e.atMs, e.claimedAtMs])).toEqual([
      ['finished', 1, start + 4_300, start + 4_000],
      ['claimed', 0, start + 2_000, null],
      ['claimed', 0, start, null],
    ]);
  });

  it('lists bulk replays newest first by keyset, and by status', async () => {
    const deps = { unitOfWork: postgresSettlementUnitOfWork(db) };
    for (let i = 0; i < 22; i += 1)
      await previewBulkReplay(deps, support, {
        filter: { receiptIdPrefix: `d-00${i % 10}` },
        note: `job ${i}`,
      });
    const expected = (await pool.query<{ id: number }>(`select id from keel.bulk_replay order by id desc`)).rows.map(
      (r) => r.id,
    );
    const first = await listBulkReplays(db, {});
    const after = parseBulkReplayCursor(first.nextCursor!);
    expect(after).toBe(first.jobs.at(-1)!.id);
    const second = await listBulkReplays(db, { cursor: after as number });
    expect([...first.jobs, ...second.jobs].map((j) => j.id)).toEqual(expected);
    expect(second.nextCursor).toBeNull();
    expect((await listBulkReplays(db, { status: 'RUNNING' })).jobs).toEqual([]);
    expect(first.jobs[0]).toMatchObject({ status: 'PREVIEWED', createdBy: 'support', note: 'job 21', startedBy: null });
    expect(await settlementNowMs(db)).toBeGreaterThan(NOW);
  });
});

describe('a failure as people read it', () => {
  it('gives the detail digest as hex on the list and the receipt, and says when the JSON is unreadable', async () => {
    const detail = failureDetailSha256Hex('ledger rpc: connection reset');
    const json = deadLetterCanonicalJson({
      receiptId: 'fd-001',
      finalizedAt: 5,
      attempts: 3,
      reasonCode: 'rpc',
      detailSha256Hex: detail,
    });
    if (!json.ok) throw new Error(json.error.detail);
    await pool.query(
      `insert into settle.dead_letters (receipt_id, finalized_at, attempts, reason, canonical_json, recorded_at_ms)
       values ('fd-001', 5, 3, 'rpc', $1, $2), ('fd-002', 5, 3, 'rpc', '{"reason":{}}', $2)`,
      [json.value, NOW],
    );
    await pool.query(
      `insert into settle.attempts (receipt_id, finalized_at, work_kind, attempts, next_visible_at_ms, reason_code,
         reason_detail_sha256, updated_at_ms)
       values ('fd-003', 5, 'retry_scheduled', 2, $1, 'backend', decode($2, 'hex'), 1)`,
      [NOW + MIN, detail],
    );
    const page = await listDeadLetterPage(db, dead({ q: 'fd-' }), { nowMs: NOW });
    expect(page.rows.map((r) => [r.receiptId, r.detailSha256Hex])).toEqual([
      ['fd-002', null],
      ['fd-001', detail],
    ]);
    expect(page.rows[0]).not.toHaveProperty('canonicalJson');

    expect((await readReceiptHistory(db, 'fd-001'))?.deadLetter).toMatchObject({
      detailSha256Hex: detail,
      record: { ok: true, schema: 'chio.settle.dead-letter.v2', detailSha256Hex: detail, disagreements: [] },
    });
    expect((await readReceiptHistory(db, 'fd-002'))?.deadLetter).toMatchObject({
      detailSha256Hex: null,
      record: { ok: false, problem: 'the stored record’s reason.detail_sha256 is not 32 bytes' },
    });
    expect((await readReceiptHistory(db, 'fd-003'))?.queued).toMatchObject({
      reasonCode: 'backend',
      attempts: 2,
      reasonDetailSha256Hex: detail,
    });
  });
});
