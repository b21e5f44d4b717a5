import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../lib/db/client';
import { migrateDatabase } from '../../lib/db/migrate';
import { missingRuntimeIndexes } from '../../lib/db/runtime-indexes';
import { COUNT_CAP } from '../../lib/domain/cursor';
import { countUpToCap } from '../../lib/queries/count';
import { corruptScanQuery, listRetryKeys, retryKeyStepsQuery } from '../../lib/queries/retry-keys';
import { deadLetterFilterConditions } from '../../lib/db/sql/dead-letter-filter';
import { inGrantRange } from '../../lib/db/sql/lease-grants';
import { FAILURE_CODES } from '../../lib/domain/settlement';
import {
  deadLetterGroups,
  GROUP_FILTER_COLUMNS,
  listDeadLetterPage,
  listSettlementQueue,
  parseSettlementCursor,
  reasonRangesQuery,
} from '../../lib/queries/settlements';
import { deadLetterFiltersSchema, queueFiltersSchema } from '../../lib/queries/settlements-types';
import { freshDatabase, type TestDatabase } from '../support/database';

const run = promisify(execFile);
const cli = ['--import', 'tsx', '--conditions=react-server', 'bin/keel.ts'];

/** The text plan of a statement, one line per node. */
async function plan(db: Database, statement: ReturnType<typeof sql>): Promise<string> {
  const { rows } = await db.execute<{ 'QUERY PLAN': string }>(sql`explain ${statement}`);
  return rows.map((r) => r['QUERY PLAN']).join('\n');
}

describe('reads at scale', () => {
  let database: TestDatabase;
  let env: NodeJS.ProcessEnv;

  /** The plan of a statement a read sent, with its parameters. */
  async function explained(statement: { text: string; values: unknown[] }, how = 'explain'): Promise<string> {
    const { rows } = await database.pool.query(`${how} ${statement.text}`, statement.values);
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  }

  /** A database over a pool that records every statement the reads send, with its parameters. */
  function recordingDatabase() {
    const sent: { text: string; values: unknown[] }[] = [];
    const pool = database.newPool(2);
    const recording = new Proxy(pool, {
      get(target, name, receiver) {
        if (name !== 'query') return Reflect.get(target, name, receiver);
        return (query: { text: string; values?: unknown[] }, ...rest: unknown[]) => {
          sent.push({ text: query.text, values: query.values ?? (Array.isArray(rest[0]) ? rest[0] : []) });
          return (target.query as (...args: unknown[]) => unknown)(query, ...rest);
        };
      },
    }) as typeof pool;
    return { db: createDatabase(recording), sent };
  }

  // An attached schema (the runtime's own bootstrap file, no Keel indexes) loaded by the generator at a modest size.
  beforeAll(async () => {
    database = await freshDatabase({ empty: true });
    await database.pool.query(readFileSync('lib/db/bootstrap/oxide-batch.sql', 'utf8'));
    expect((await migrateDatabase(database.pool)).ok).toBe(true);
    env = { ...process.env, DATABASE_URL: database.url, KEEL_CHECKPOINT_KEY: 'ab'.repeat(32) };
    await run(
      process.execPath,
      [
        ...cli,
        'load-scale',
        '--executions',
        '20000',
        '--retry-keys',
        '3000',
        '--attempts',
        '5000',
        '--dead-letters',
        '12000',
      ],
      { env },
    );
  }, 300_000);

  it('the generator refuses a database that already holds rows unless told to append', async () => {
    const refused = await run(process.execPath, [...cli, 'load-scale', '--executions', '10'], { env }).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect(refused).toMatchObject({ code: 1 });
    expect((refused as { stderr: string }).stderr).toContain('--append');
    const { rows } = await database.pool.query('select count(*)::int as n from oxide_batch.ob_job_execution');
    expect(rows[0].n).toBe(20_000);
  });

  it('loads checksummed envelopes the list reads as keys, with a few corrupt ones', async () => {
    const page = await listRetryKeys(database.db, { only: 'keys', limit: 100 });
    expect(page.rows).toHaveLength(100);
    expect(page.rows.every((r) => r.kind === 'key')).toBe(true);
    expect(page.nextCursor).not.toBeNull();
    const corrupt = await listRetryKeys(database.db, { only: 'corrupt', limit: 50 });
    expect(corrupt.rows.length).toBeGreaterThan(0);
    expect(corrupt.rows.every((r) => r.kind === 'corrupt')).toBe(true);
  });

  it('counts exactly up to the cap and flags an estimate above it', async () => {
    const db = database.db;
    const exact = await database.pool.query(`select count(*)::int as n from settle.dead_letters where reason = 'rpc'`);
    expect(exact.rows[0].n).toBeGreaterThan(0);
    expect(exact.rows[0].n).toBeLessThanOrEqual(COUNT_CAP);
    expect(await countUpToCap(db, sql`settle.dead_letters`, sql`reason = 'rpc'`)).toEqual({
      value: exact.rows[0].n,
      capped: false,
    });
    const above = await countUpToCap(db, sql`settle.dead_letters`, sql`true`);
    expect(above).toMatchObject({ capped: true, estimated: true });
    // The estimate is the planner's (reltuples after the generator's
    // ANALYZE): near the 12,000 rows, never below the cap.
    expect(above.value).toBeGreaterThan(COUNT_CAP);
    expect(Math.abs(above.value - 12_000)).toBeLessThan(1_200);
  });

  it('serves phase and category filters from the runtime indexes once applied, no seq scan of the steps', async () => {
    expect(await missingRuntimeIndexes(database.pool)).not.toEqual([]);

    await run(process.execPath, [...cli, 'runtime-indexes', '--apply'], { env });
    expect(await missingRuntimeIndexes(database.pool)).toEqual([]);
    await database.pool.query('analyze oxide_batch.ob_step_execution');
    const db = createDatabase(database.newPool(2));
    for (const filters of [
      { phase: 'read' },
      { category: 'TIMEOUT' },
      { phase: 'write', category: 'SERIALIZATION' },
      {},
    ] as const) {
      const text = await plan(db, retryKeyStepsQuery(null, { only: 'keys', ...filters }, 101));
      expect(text).not.toMatch(/Seq Scan on ob_step_execution/);
      expect(text).toMatch(/keel_ob_step_execution_envelope/);
    }
    // The corrupt-only walk: the newest retained steps through the partial index.
    const walk = await plan(db, corruptScanQuery(null, { only: 'corrupt' }, 1000));
    expect(walk).not.toMatch(/Seq Scan on ob_step_execution/);
    expect(walk).toMatch(/keel_ob_step_execution_envelope_idx/);
    const page = await listRetryKeys(db, { only: 'keys', phase: 'write', category: 'SERIALIZATION', limit: 20 });
    expect(page.rows.length).toBeGreaterThan(0);
    expect(page.rows.every((r) => r.kind === 'key' && r.phase === 'write' && r.category === 'SERIALIZATION')).toBe(
      true,
    );
  });

  it("counts the groups under an attempts filter in each reason's own index range, with no grouping pass", async () => {
    // Vacuumed as the scale database is (docs/performance.md): index-only scans need the visibility map.
    await database.pool.query('vacuum analyze settle.dead_letters');
    const db = createDatabase(database.newPool(2));
    const nowMs = Date.now();
    const others = deadLetterFilterConditions({ minAttempts: 5 }, nowMs, GROUP_FILTER_COLUMNS);
    const text = await plan(db, reasonRangesQuery(FAILURE_CODES, others));
    expect(text).toMatch(/Index Only Scan using dead_letters_reason_attempts_idx/);
    expect(text).toMatch(/Index Cond: \(\(reason = code\.code\) AND \(attempts >= 5\)\)/);
    expect(text).not.toMatch(/HashAggregate|Seq Scan/);
    const { groups } = await deadLetterGroups(db, { minAttempts: 5 }, { nowMs });
    const { rows } = await database.pool.query<{ reason: string; n: number }>(
      'select reason, count(*)::int as n from settle.dead_letters where attempts >= 5 group by reason',
    );
    expect(rows.length).toBeGreaterThan(1);
    expect(new Map(groups.map((g) => [g.reason, g.count.value]))).toEqual(
      new Map(rows.map((r) => [r.reason, Math.min(r.n, COUNT_CAP)])),
    );
  });

  it("pages the queue under a minimum of attempts from each count's own range, in due order", async () => {
    await database.pool.query('vacuum analyze settle.attempts');
    const { db, sent } = recordingDatabase();
    const nowMs = Date.now();
    const shown: string[] = [];
    let cursor: string | null = null;
    do {
      const filters = queueFiltersSchema.parse({ minAttempts: '3' });
      const after = cursor ? (parseSettlementCursor(cursor) as [number, string]) : null;
      const page = await listSettlementQueue(db, { ...filters, cursor: after }, { nowMs, sample: null });
      shown.push(...page.rows.map((r) => r.receiptId));
      cursor = page.nextCursor;
    } while (cursor);
    const { rows } = await database.pool.query<{ receipt_id: string }>(
      `select receipt_id from settle.attempts where attempts >= 3 and next_visible_at_ms <= $1
       and (lease_owner is null or lease_until_ms <= $1) order by next_visible_at_ms, receipt_id`,
      [nowMs],
    );
    expect(rows.length).toBeGreaterThan(100);
    expect(shown).toEqual(rows.map((r) => r.receipt_id));

    const text = await explained(sent.find((s) => s.text.includes('page on page.key = receipt_id'))!);
    // Each count is a range of the index led by attempts (a bitmap of it at this size, an ordered
    // scan at a million rows), never a walk of the due order testing every row's attempts.
    // (The rows of the page's keys are joined to a table this small by a scan of it.)
    const keys = text.slice(text.indexOf('Subquery Scan on page'));
    expect(keys).toMatch(/(using|on) attempts_attempts_due_idx[^\n]*\n[^\n]*Index Cond: [^\n]*attempts = c\.n/);
    expect(keys).not.toMatch(/(using|on) attempts_due_idx|Seq Scan/);
  });

  it('reads a receipt prefix of the dead letters from the prefix index, whatever the planner guesses', async () => {
    await database.pool.query('analyze settle.dead_letters');
    const { db, sent } = recordingDatabase();
    const page = await listDeadLetterPage(db, deadLetterFiltersSchema.parse({ q: 'rcpt_ab' }), { sample: null });
    const { rows } = await database.pool.query<{ receipt_id: string }>(
      `select receipt_id from settle.dead_letters where receipt_id like 'rcpt_ab%'
       order by recorded_at_ms desc, receipt_id desc limit 50`,
    );
    expect(rows.length).toBeGreaterThan(0);
    expect(page.rows.map((r) => r.receiptId)).toEqual(rows.map((r) => r.receipt_id));
    const text = await explained(
      sent.find((s) => s.text.includes('page on page.key = receipt_id'))!,
      'explain (analyze, costs off, timing off)',
    );
    // The matches came from an index range over the prefix and were sorted; the walk of the
    // recorded order (a scan of the table at this size) never ran.
    expect(text).toMatch(/CTE matches[\s\S]*?Index Cond: \(\(receipt_id (~>=~|>=) 'rcpt_ab'::text\)/);
    expect(text).toMatch(/on dead_letters k \(never executed\)/);
  });

  it("starts a page whose cursor the clock has passed at the filter's own bound, not at the cursor", async () => {
    await database.pool.query('vacuum analyze settle.attempts');
    const nowMs = Date.now();
    const stale: [number, string] = [nowMs - 86_400_000, 'rcpt_'];
    for (const [query, state] of [
      [{ state: 'retry_scheduled' }, 'retry_scheduled'],
      [{ maxAge: '6h' }, 'due'],
    ] as const) {
      const { db, sent } = recordingDatabase();
      const filters = queueFiltersSchema.parse(query);
      const first = await listSettlementQueue(db, filters, { nowMs, sample: null });
      const page = await listSettlementQueue(db, { ...filters, cursor: stale }, { nowMs, sample: null });
      expect(first.rows.length, state).toBeGreaterThan(0);
      // Every row the filter keeps follows a cursor a day old: the page is the first one.
      expect(page.rows.map((r) => r.receiptId)).toEqual(first.rows.map((r) => r.receiptId));
      const statement = sent.filter((s) => s.text.includes('page on page.key = receipt_id')).at(-1)!;
      const text = await explained(statement, 'explain (costs off)');
      // The scan is positioned by the filter's bound; the cursor's row comparison would have
      // positioned it at the cursor, a day of rows before the first it keeps.
      expect(text, state).toMatch(/Index Cond: \(\(?next_visible_at_ms >/);
      expect(text, state).not.toMatch(/ROW\(next_visible_at_ms, receipt_id\) >/);
    }
  });

  it("reads the leased rows under a receipt prefix from their grants' ranges, not from the prefix index", async () => {
    await database.pool.query('vacuum analyze settle.attempts');
    const { rows: grants } = await database.pool.query<{ n: number }>(
      'select count(*)::int as n from settle.lease_grants where lease_until_ms > $1',
      [Date.now()],
    );
    expect(grants[0]!.n).toBeGreaterThan(0);
    /** Each scan bounded by a grant's range (an index condition on g.lo_...): its index and its condition. */
    const grantScans = (text: string) => {
      const lines = text.split('\n');
      return lines.flatMap((line, i) =>
        /Index Cond: .*\bg(_\d+)?\.lo_next_visible_at_ms/.test(line)
          ? [{ index: /(?:Scan using|Bitmap Index Scan on) (\w+)/.exec(lines[i - 1] ?? '')?.[1], cond: line }]
          : [],
      );
    };
    const prefixBound = /receipt_id (~>=~|>=) 'rcpt_a'/;
    for (const state of ['due', 'leased'] as const) {
      const { db, sent } = recordingDatabase();
      await listSettlementQueue(db, queueFiltersSchema.parse({ q: 'rcpt_a', state }), { sample: null });
      const lookups = sent.filter((s) => s.text.includes('settle.lease_grants g'));
      expect(lookups.length, state).toBeGreaterThan(0);
      for (const lookup of lookups) {
        const scans = grantScans(await explained(lookup, 'explain (costs off)'));
        expect(scans.length, state).toBeGreaterThan(0);
        expect(new Set(scans.map((scan) => scan.index)), state).toEqual(new Set(['attempts_due_idx']));
        // At ten million rows the planner guessed a prefix's matches as a handful and read the
        // prefix's whole range from an index led by the receipt, for each grant. At this size it
        // takes the due index anyway; without that index, the prefix must still bound no scan.
        const client = await database.pool.connect();
        try {
          await client.query('begin');
          await client.query('drop index settle.attempts_due_idx');
          const { rows } = await client.query(`explain (costs off) ${lookup.text}`, lookup.values);
          const without = grantScans(rows.map((r) => r['QUERY PLAN']).join('\n'));
          expect(without.length, state).toBeGreaterThan(0);
          for (const scan of without) expect(scan.cond, state).not.toMatch(prefixBound);
        } finally {
          await client.query('rollback');
          client.release();
        }
      }
    }
  });

  it('plans no parallel worker on a console pool, where the server would start one', async () => {
    const client = await database.pool.connect();
    try {
      await client.query('begin');
      // Parallel plans made free: the planner takes one wherever it is allowed to.
      await client.query(
        'set local parallel_setup_cost = 0; set local parallel_tuple_cost = 0; ' +
          'set local min_parallel_table_scan_size = 0; set local min_parallel_index_scan_size = 0',
      );
      const planned = async () =>
        (await client.query('explain select count(*) from oxide_batch.ob_step_execution')).rows
          .map((r) => r['QUERY PLAN'])
          .join('\n');
      expect(await planned()).not.toContain('Gather');
      await client.query('set local max_parallel_workers_per_gather = 2');
      expect(await planned()).toContain('Gather');
    } finally {
      await client.query('rollback');
      client.release();
    }
  });

  it("estimates a lease grant's range as a narrow one, so a grant's rows are read through the index", async () => {
    await database.pool.query('analyze settle.attempts');
    const db = createDatabase(database.newPool(1));
    const estimate = async (range: ReturnType<typeof sql>) => {
      const { rows } = await db.execute<{ 'QUERY PLAN': { Plan: Record<string, unknown> }[] }>(sql`
        explain (format json) select a.receipt_id from settle.attempts a, settle.lease_grants g where ${range}`);
      // The nested loop's inner side, repeated per grant: the rows of one grant's range.
      const find = (node: Record<string, unknown>): number | null => {
        if (node['Relation Name'] === 'attempts') return node['Plan Rows'] as number;
        for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) {
          const rows = find(child);
          if (rows !== null) return rows;
        }
        return null;
      };
      return find(rows[0]!['QUERY PLAN'][0]!.Plan)!;
    };
    const { rows } = await database.pool.query<{ n: number }>('select count(*)::int as n from settle.attempts');
    const table = rows[0]!.n;
    const rowComparisonOnly = sql`(a.next_visible_at_ms, a.receipt_id) >= (g.lo_next_visible_at_ms, g.lo_receipt_id)
      and (a.next_visible_at_ms, a.receipt_id) <= (g.hi_next_visible_at_ms, g.hi_receipt_id)`;
    // The row comparison alone: a ninth of the queue per grant, which at ten million rows cost more than a scan.
    expect(await estimate(rowComparisonOnly)).toBeGreaterThan(table / 20);
    expect(await estimate(inGrantRange)).toBeLessThan(table / 40);
  });
});
